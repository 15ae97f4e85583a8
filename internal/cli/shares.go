package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

type sharesFlags struct{ queue, share string }

// Shares is `sharq shares`: per quota share and capacity unit, its limit,
// what it uses of its own, borrows, lends and leaves idle.
func Shares(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("shares", "", "Show each quota share's capacity: limit, own use, borrowed, lent and idle.", stdout, stderr, true)
	var f sharesFlags
	v.fs.StringVar(&f.queue, "queue", "", "only this job queue")
	v.fs.StringVar(&f.share, "share", "", "only this quota share")
	if _, err := v.parse(args, 0, 0); err != nil {
		return v.exit(err)
	}
	return v.exit(shares(ctx, v, f))
}

func shares(ctx context.Context, v *verb, f sharesFlags) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	u, err := c.usage(ctx, f)
	if err != nil {
		return err
	}
	if v.json() {
		return printJSON(v.stdout, u)
	}
	return writeUsage(v.stdout, u)
}

// usage reads the shares' standing, keeping the queues and shares asked for.
func (c *client) usage(ctx context.Context, f sharesFlags) (sharqapi.Usage, error) {
	var u sharqapi.Usage
	if err := c.getJSON(ctx, "/sharq/v1/shares", nil, &u); err != nil {
		return u, err
	}
	var qs []sharqapi.QueueUsage
	for _, q := range u.Queues {
		if f.queue != "" && q.Name != f.queue {
			continue
		}
		if f.share != "" {
			var keep []sharqapi.Share
			for _, s := range q.Shares {
				if s.Name == f.share {
					keep = append(keep, s)
				}
			}
			if len(keep) == 0 {
				continue
			}
			q.Shares = keep
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 && (f.queue != "" || f.share != "") {
		return u, &notFoundError{fmt.Sprintf("no queue or share matches --queue %q --share %q", f.queue, f.share)}
	}
	u.Queues = qs
	return u, nil
}

// writeUsage draws one block per queue: the service environment's
// capacity, then a row per share and unit with a bar of its use.
func writeUsage(w io.Writer, u sharqapi.Usage) error {
	if len(u.Queues) == 0 {
		fmt.Fprintln(w, "no job queues")
		return nil
	}
	for i, q := range u.Queues {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, queueLine(q))
		t := newTable(w, "SHARE", "UNIT", "LIMIT", "OWN", "BORROWED", "LENT", "IDLE", "WAITING", "STRATEGY", "BORROW-LIMIT", "IN-SHARE", "USE")
		for _, s := range q.Shares {
			for _, un := range s.Units {
				t.row(shareName(s), un.Unit, strconv.Itoa(un.Limit), strconv.Itoa(un.Own), strconv.Itoa(un.Borrowed),
					strconv.Itoa(un.Lent), strconv.Itoa(un.Idle), strconv.Itoa(s.Runnable), orDash(s.Strategy),
					borrowLimit(s), inShare(s), bar(un.Own, un.Lent, un.Idle, un.Borrowed))
			}
			if len(s.Units) == 0 {
				t.row(shareName(s), "-", "0", "0", "0", "0", "0", strconv.Itoa(s.Runnable), orDash(s.Strategy), borrowLimit(s), inShare(s), "")
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
		for _, warning := range usageWarnings(q) {
			fmt.Fprintln(w, warning)
		}
		for _, s := range q.Shares {
			if s.MinimumRuntimeSeconds > 0 {
				fmt.Fprintf(w, "%s: a job is not preempted in its first %ds (minimum runtime)\n", s.Name, s.MinimumRuntimeSeconds)
			}
		}
	}
	fmt.Fprintf(w, "\n%s own  %s lent  %s idle  +%s borrowed\n", cellOwn, cellLent, cellIdle, cellBorrowed)
	return nil
}

// queueLine heads a queue's block: its environment's use per unit.
func queueLine(q sharqapi.QueueUsage) string {
	s := "queue " + q.Name
	if q.State != "" && q.State != "ENABLED" {
		s += " (" + q.State + ")"
	}
	if q.ServiceEnvironment != "" {
		var units []string
		for _, c := range q.Capacity {
			units = append(units, fmt.Sprintf("%s %d/%d in use", c.Unit, c.Used, c.Limit))
		}
		s += ", service environment " + q.ServiceEnvironment
		if len(units) > 0 {
			s += ": " + strings.Join(units, ", ")
		}
	}
	return s
}

func shareName(s sharqapi.Share) string {
	name := s.Name
	if name == "" {
		name = "(fifo)" // a FIFO queue has one unnamed share
	}
	if s.State == "DISABLED" {
		name += " (DISABLED)"
	}
	return name
}

func borrowLimit(s sharqapi.Share) string {
	switch {
	case s.Strategy != "LEND_AND_BORROW":
		return "-"
	case s.BorrowLimit < 0:
		return "none"
	}
	return strconv.Itoa(s.BorrowLimit) + "%"
}

func inShare(s sharqapi.Share) string {
	if s.InSharePreemption {
		return "preempts"
	}
	return "-"
}
