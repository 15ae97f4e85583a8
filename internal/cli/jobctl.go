package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// Priority is `sharq priority JOB N`: it changes a job's scheduling
// priority within its share.
func Priority(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("priority", "JOB N", "Set a job's scheduling priority (0-9999; higher runs first within its share).",
		stdout, stderr, true)
	pos, err := v.parse(args, 2, 2)
	if err != nil {
		return v.exit(err)
	}
	return v.exit(priority(ctx, v, pos[0], pos[1]))
}

func priority(ctx context.Context, v *verb, ref, value string) error {
	n, err := atoi("the priority", value)
	if err != nil {
		return err
	}
	if n < 0 || n > 9999 {
		return usagef("the priority must be 0 to 9999, not %d", n)
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return err
	}
	before, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
	if err != nil {
		return err
	}
	var raw []byte
	if _, err := c.batch.UpdateServiceJob(ctx, &batch.UpdateServiceJobInput{JobId: aws.String(id), SchedulingPriority: aws.Int32(int32(n))}, captureBody(&raw)); err != nil {
		return err
	}
	if v.json() {
		return printJSON(v.stdout, raw)
	}
	fmt.Fprintf(v.stdout, "%s: priority %d -> %d\n", jobLabel(aws.ToString(before.JobName), id), aws.ToInt32(before.SchedulingPriority), n)
	return nil
}

// Cancel is `sharq cancel JOB...` or `sharq cancel --share S`: it
// terminates jobs, all named ones in one request (TerminateServiceJobs),
// so the server ends them in one cycle and dispatches nothing behind them
// in between.
func Cancel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("cancel", "JOB... | --share SHARE [--status S,...]",
		"Terminate jobs: waiting ones leave the queue, running ones are stopped; they end FAILED.",
		stdout, stderr, false)
	var f cancelFlags
	v.fs.StringVar(&f.reason, "reason", "Cancelled with sharq cancel", "reason the job shows afterwards")
	v.fs.StringVar(&f.queue, "queue", "", "with --share: the share's job queue, when several have a share of that name")
	v.fs.StringVar(&f.share, "share", "", "cancel every unfinished job of this quota share (instead of naming jobs)")
	v.fs.StringVar(&f.status, "status", "", "with --share: only these statuses, comma-separated (default: all unfinished)")
	pos, err := v.parse(args, 0, -1)
	if err == nil {
		err = f.check(pos)
	}
	if err != nil {
		return v.exit(err)
	}
	return v.exit(cancel(ctx, v, pos, f))
}

type cancelFlags struct {
	reason, queue, share, status string
}

func (f cancelFlags) check(refs []string) error {
	switch {
	case f.share == "" && len(refs) == 0:
		return usagef("name the jobs to cancel, or give --share (see 'sharq cancel -h')")
	case f.share != "" && len(refs) > 0:
		return usagef("give either jobs or --share, not both")
	case f.share == "" && (f.status != "" || f.queue != ""):
		return usagef("--status and --queue go with --share")
	}
	return nil
}

// target is a job about to be cancelled, as the output names it.
type target struct{ id, label string }

// cancel terminates the jobs; a job that cannot be cancelled does not stop
// the others, and the worst outcome decides the exit code.
func cancel(ctx context.Context, v *verb, refs []string, f cancelFlags) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	worst := ExitOK
	fail := func(err error) {
		code, msg := classify(err, v.conn.endpoint)
		fmt.Fprintf(v.stderr, "sharq cancel: %s\n", msg)
		worst = max(worst, code)
	}
	var targets []target
	if f.share != "" {
		if targets, err = c.shareTargets(ctx, f); err != nil {
			return err
		}
		if len(targets) == 0 {
			fmt.Fprintf(v.stdout, "no unfinished job in share %s\n", f.share)
		}
	}
	for _, ref := range refs {
		t, err := c.cancelTarget(ctx, v.stdout, ref)
		switch {
		case errors.Is(err, context.Canceled):
			return err
		case err != nil:
			fail(err)
		case t != nil:
			targets = append(targets, *t)
		}
	}
	for len(targets) > 0 {
		n := min(len(targets), maxTerminate)
		if err := c.terminate(ctx, v, targets[:n], f.reason, fail); err != nil {
			return err
		}
		targets = targets[n:]
	}
	if worst != ExitOK {
		return &exitError{worst}
	}
	return nil
}

// maxTerminate is how many jobs one TerminateServiceJobs request takes.
const maxTerminate = 50

// cancelTarget resolves a job; one that has ended is reported and skipped,
// as cancelling is idempotent: what a script wanted has happened.
func (c *client) cancelTarget(ctx context.Context, w io.Writer, ref string) (*target, error) {
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return nil, err
	}
	j, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
	if err != nil {
		return nil, err
	}
	label := jobLabel(aws.ToString(j.JobName), id)
	if ended(j.Status) {
		fmt.Fprintf(w, "%s had already ended: %s\n", label, j.Status)
		return nil, nil
	}
	return &target{id, label}, nil
}

// shareTargets lists the unfinished jobs of a share (or those of the given
// statuses), in the order `sharq jobs` shows them.
func (c *client) shareTargets(ctx context.Context, f cancelFlags) ([]target, error) {
	statuses := activeStatuses
	if f.status != "" {
		var err error
		if statuses, err = parseStatuses(f.status); err != nil {
			return nil, err
		}
	}
	rows, err := c.jobRows(ctx, f.queue, f.share, statuses)
	if err != nil {
		return nil, err
	}
	var out []target
	for _, r := range rows {
		if !ended(types.ServiceJobStatus(r.Status)) {
			out = append(out, target{r.ID, jobLabel(r.Name, r.ID)})
		}
	}
	return out, nil
}

// terminate ends up to maxTerminate jobs with one TerminateServiceJobs
// request and reports each.
func (c *client) terminate(ctx context.Context, v *verb, ts []target, reason string, fail func(error)) error {
	in := struct {
		Jobs   []string `json:"jobs"`
		Reason string   `json:"reason"`
	}{Reason: reason}
	for _, t := range ts {
		in.Jobs = append(in.Jobs, t.id)
	}
	var out struct {
		Successful []string `json:"successful"`
		Errors     []struct {
			Job, Code, Message string
		} `json:"errors"`
	}
	// TerminateServiceJobs is not in the AWS SDK for Go: plain JSON.
	if err := c.postJSON(ctx, "/v1/terminateservicejobs", in, &out); err != nil {
		return err
	}
	failed := map[string]string{}
	for _, e := range out.Errors {
		failed[e.Job] = e.Message
	}
	for _, t := range ts {
		if msg, bad := failed[t.id]; bad {
			fail(errors.New(t.label + ": " + msg))
			continue
		}
		fmt.Fprintf(v.stdout, "cancelled %s\n", t.label)
	}
	return nil
}
