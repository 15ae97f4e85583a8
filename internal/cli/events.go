package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/batchapi"
)

type eventsFlags struct {
	follow            bool
	audit             bool
	job, queue, share string
}

// Events is `sharq events [-f]`: job state-change events, in the shape of
// AWS Batch's EventBridge events, as a table or (-o json) one JSON object
// per line.
func Events(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("events", "", "Show job state changes: the latest the server keeps, and with -f new ones as they happen.",
		stdout, stderr, true)
	var f eventsFlags
	v.fs.BoolVar(&f.follow, "f", false, "keep printing new events until interrupted")
	v.fs.StringVar(&f.job, "job", "", "only this job (ID, ARN or name): its whole history")
	v.fs.StringVar(&f.queue, "queue", "", "only this job queue")
	v.fs.StringVar(&f.share, "share", "", "only this quota share")
	v.fs.BoolVar(&f.audit, "audit", false, "the audit log instead: every mutating call, allowed or denied (needs sharq:ReadAuditLog)")
	if _, err := v.parse(args, 0, 0); err != nil {
		return v.exit(err)
	}
	return v.exit(events(ctx, v, f))
}

func events(ctx context.Context, v *verb, f eventsFlags) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	if f.audit {
		return auditLog(ctx, c, v, f.follow)
	}
	q := url.Values{}
	if f.job != "" {
		id, err := c.resolveJob(ctx, f.job)
		if err != nil {
			return err
		}
		q.Set("job", id)
	}
	if f.queue != "" {
		q.Set("queue", f.queue)
	}
	if f.share != "" {
		q.Set("share", f.share)
	}
	if f.follow {
		q.Set("follow", "true")
	}
	resp, err := c.sharqGet(ctx, "/sharq/v1/events", q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = copyEvents(resp.Body, v.stdout, v.json())
	if f.follow && ctx.Err() != nil {
		return nil // following ends when the person stops it
	}
	return err
}

// eventFormat lays out the event table. It is fixed-width rather than
// aligned to the widest cell because rows are printed as events arrive.
const eventFormat = "%-19s  %-20s  %-8s  %-12s  %-9s  %s\n"

// copyEvents prints each JSON line of the stream as it arrives.
func copyEvents(r io.Reader, w io.Writer, jsonLines bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	if !jsonLines {
		fmt.Fprintf(w, eventFormat, "TIME", "JOB", "ID", "SHARE", "STATUS", "REASON")
	}
	for sc.Scan() {
		if jsonLines {
			if _, err := fmt.Fprintf(w, "%s\n", sc.Bytes()); err != nil {
				return err
			}
			continue
		}
		var ev batchapi.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("the server sent a malformed event: %w", err)
		}
		d := ev.Detail
		at, _ := time.Parse(time.RFC3339Nano, ev.Time)
		line := fmt.Sprintf(eventFormat, clock(at.UnixMilli()), squeeze(d.JobName, nameWidth), shortID(d.JobID),
			truncate(orDash(d.QuotaShareName), 12), d.Status, d.StatusReason)
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
