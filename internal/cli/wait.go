package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// Wait is `sharq wait JOB`: it waits until the job ends and exits 0 when it
// succeeded, 1 when it failed. On a terminal it keeps one status line up to
// date; elsewhere it prints a line per change, for CI logs.
func Wait(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("wait", "JOB", "Wait for a job to end: exit 0 when it SUCCEEDED, 1 when it FAILED.", stdout, stderr, true)
	timeout := v.fs.Duration("timeout", 0, "give up after this long, with exit code 1 (default: wait forever)")
	pos, err := v.parse(args, 1, 1)
	if err != nil {
		return v.exit(err)
	}
	return v.exit(wait(ctx, v, pos[0], *timeout))
}

func wait(ctx context.Context, v *verb, ref string, timeout time.Duration) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return err
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	live := isTerminal(v.stdout) && !v.json()
	last := ""
	for {
		var raw []byte
		j, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)}, captureBody(&raw))
		if err != nil {
			return err
		}
		line := waitLine(j)
		switch {
		case v.json():
		case live:
			// A line longer than the terminal would wrap, and \r would then
			// redraw only its last part.
			width, _ := terminalSize(v.stdout)()
			fmt.Fprintf(v.stdout, "\r%s%s", escEraseLine, truncate(line, width-1))
		case line != last:
			fmt.Fprintln(v.stdout, line)
		}
		last = line
		if ended(j.Status) {
			return finishWait(v, j, raw, live)
		}
		select {
		case <-ctx.Done():
			if live {
				fmt.Fprintln(v.stdout)
			}
			return ctx.Err()
		case <-deadline:
			if live {
				fmt.Fprintln(v.stdout)
			}
			return fmt.Errorf("gave up after %s: %s is %s", timeout, aws.ToString(j.JobName), j.Status)
		case <-time.After(pollInterval):
		}
	}
}

func ended(s types.ServiceJobStatus) bool {
	return s == types.ServiceJobStatusSucceeded || s == types.ServiceJobStatusFailed
}

// waitLine is the job's status in one line: why it waits while it waits,
// how it ended once it has.
func waitLine(j *batch.DescribeServiceJobOutput) string {
	s := fmt.Sprintf("%s (%s) %s", aws.ToString(j.JobName), shortID(aws.ToString(j.JobId)), j.Status)
	switch {
	case ended(j.Status):
		s += " after " + duration(time.UnixMilli(aws.ToInt64(j.StoppedAt)).Sub(time.UnixMilli(aws.ToInt64(j.CreatedAt))))
		if j.Status == types.ServiceJobStatusFailed && aws.ToString(j.StatusReason) != "" {
			s += ": " + aws.ToString(j.StatusReason)
		}
	case aws.ToString(j.StatusReason) != "":
		s += ": " + aws.ToString(j.StatusReason)
	}
	return s
}

func finishWait(v *verb, j *batch.DescribeServiceJobOutput, raw []byte, live bool) error {
	if live {
		fmt.Fprintln(v.stdout)
	}
	if v.json() {
		if err := printJSON(v.stdout, raw); err != nil {
			return err
		}
	}
	if j.Status == types.ServiceJobStatusFailed {
		return &exitError{ExitFailure}
	}
	return nil
}
