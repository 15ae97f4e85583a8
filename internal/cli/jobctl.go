package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
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
	fmt.Fprintf(v.stdout, "%s (%s): priority %d -> %d\n", aws.ToString(before.JobName), shortID(id), aws.ToInt32(before.SchedulingPriority), n)
	return nil
}

// Cancel is `sharq cancel JOB...`: it terminates jobs (TerminateServiceJob).
func Cancel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("cancel", "JOB...", "Terminate jobs: waiting ones leave the queue, running ones are stopped; they end FAILED.",
		stdout, stderr, false)
	reason := v.fs.String("reason", "Cancelled with sharq cancel", "reason the job shows afterwards")
	pos, err := v.parse(args, 1, -1)
	if err != nil {
		return v.exit(err)
	}
	return v.exit(cancel(ctx, v, pos, *reason))
}

// cancel terminates each job in turn; a job that cannot be cancelled does
// not stop the others, and the worst outcome decides the exit code.
func cancel(ctx context.Context, v *verb, refs []string, reason string) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	worst := ExitOK
	for _, ref := range refs {
		err := cancelOne(ctx, c, v.stdout, ref, reason)
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) {
			return err
		}
		code, msg := classify(err, v.conn.endpoint)
		fmt.Fprintf(v.stderr, "sharq cancel: %s\n", msg)
		worst = max(worst, code)
	}
	if worst != ExitOK {
		return &exitError{worst}
	}
	return nil
}

func cancelOne(ctx context.Context, c *client, w io.Writer, ref, reason string) error {
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return err
	}
	j, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%s (%s)", aws.ToString(j.JobName), shortID(id))
	if ended(j.Status) {
		// Cancelling is idempotent: what a script wanted has happened.
		fmt.Fprintf(w, "%s had already ended: %s\n", name, j.Status)
		return nil
	}
	if _, err := c.batch.TerminateServiceJob(ctx, &batch.TerminateServiceJobInput{JobId: aws.String(id), Reason: aws.String(reason)}); err != nil {
		return err
	}
	fmt.Fprintf(w, "cancelled %s\n", name)
	return nil
}
