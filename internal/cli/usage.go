package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/usage"
)

type usageFlags struct {
	since, every, by, output string
}

// Usage is `sharq usage`: the capacity each share, share identifier, owner
// or queue used over a period, own and borrowed, lent, and held by
// attempts later preempted, in instance- and GPU-hours.
func Usage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("usage", "", "Show the capacity used over a period: own, borrowed (from which share), lent (to which share)\n"+
		"and held by attempts that were later preempted, in instance- and GPU-hours (csv and json: seconds).", stdout, stderr, false)
	f := usageFlags{since: "30d", by: usage.ByShare, output: "table"}
	v.fs.StringVar(&f.since, "since", f.since, "the period, up to now: 30d, 2w, 12h (default 30d)")
	v.fs.StringVar(&f.every, "every", "", "one row per group and kind in each period of this length: 1d, 1h")
	v.fs.StringVar(&f.by, "by", f.by, "group by share, share-id, owner or queue (default share)")
	v.fs.StringVar(&f.output, "o", f.output, "output format: table, csv or json")
	v.fs.StringVar(&f.output, "output", f.output, "output format: table, csv or json")
	if _, err := v.parse(args, 0, 0); err != nil {
		return v.exit(err)
	}
	return v.exit(usageReport(ctx, v, f))
}

func usageReport(ctx context.Context, v *verb, f usageFlags) error {
	switch f.output {
	case "table", "csv", "json":
	default:
		return usagef("-o must be table, csv or json, not %q", f.output)
	}
	switch f.by {
	case usage.ByShare, usage.ByShareID, usage.ByOwner, usage.ByQueue:
	default:
		return usagef("--by must be share, share-id, owner or queue, not %q", f.by)
	}
	q := url.Values{"since": {f.since}, "by": {f.by}}
	for name, s := range map[string]string{"--since": f.since, "--every": f.every} {
		if s == "" {
			continue
		}
		if d, err := usage.ParseDuration(s); err != nil || d <= 0 {
			return usagef("%s must be a duration such as 30d, 2w or 12h, not %q", name, s)
		}
	}
	if f.every != "" {
		q.Set("every", f.every)
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	var rep sharqapi.UsageReport
	if err := c.getJSON(ctx, sharqapi.UsagePath, q, &rep); err != nil {
		return err
	}
	switch f.output {
	case "json":
		return printJSON(v.stdout, rep)
	case "csv":
		return writeUsageCSV(v.stdout, rep)
	}
	return writeUsageTable(v.stdout, rep)
}

// usageKeyHeader names the column of the groups.
func usageKeyHeader(by string) string {
	switch by {
	case usage.ByShareID:
		return "SHARE-ID"
	case usage.ByOwner:
		return "OWNER"
	case usage.ByQueue:
		return "QUEUE"
	}
	return "SHARE"
}

// usageKey names a group: a FIFO queue's jobs have no share, unsigned
// ones no owner; an owner by its user name, as `sharq jobs` does.
func usageKey(by, key string) string {
	switch {
	case key == "" && by == usage.ByShare:
		return "(fifo)"
	case by == usage.ByOwner:
		return orDash(userName(key))
	}
	return orDash(key)
}

// usagePeer names the other share of borrowed and lent capacity: "spare"
// for the capacity beyond all share limits.
func usagePeer(row sharqapi.UsageRow) string {
	switch row.Kind {
	case usage.Borrowed:
		return lenderName(row.Peer)
	case usage.Lent:
		return row.Peer
	}
	return "-"
}

// writeUsageTable prints a heading with the period, then a row per
// bucket, group, kind and peer in hours.
func writeUsageTable(w io.Writer, rep sharqapi.UsageReport) error {
	fmt.Fprintf(w, "usage by %s from %s to %s", rep.By, clock(rep.From), clock(rep.To))
	if rep.Every > 0 {
		fmt.Fprintf(w, ", every %s", period(rep.Every))
	}
	fmt.Fprintln(w)
	if len(rep.Rows) == 0 {
		fmt.Fprintln(w, "no capacity was used")
		return nil
	}
	header := []string{}
	if rep.Every > 0 {
		header = append(header, "FROM")
	}
	if rep.By == usage.ByShare || rep.By == usage.ByShareID {
		header = append(header, "QUEUE")
	}
	header = append(header, usageKeyHeader(rep.By), "KIND", "WITH", "INSTANCE-HOURS", "GPU-HOURS")
	t := newTable(w, header...)
	for _, row := range rep.Rows {
		var cells []string
		if rep.Every > 0 {
			cells = append(cells, clock(row.From))
		}
		if rep.By == usage.ByShare || rep.By == usage.ByShareID {
			cells = append(cells, row.Queue)
		}
		cells = append(cells, usageKey(rep.By, row.Key), row.Kind, usagePeer(row), inHours(row.InstanceSeconds), inHours(row.GPUSeconds))
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if slices.ContainsFunc(rep.Rows, func(r sharqapi.UsageRow) bool { return r.Kind == usage.Preempted }) {
		fmt.Fprintln(w, "preempted: the part of own and borrowed held by attempts that were later preempted")
	}
	return nil
}

// period says a bucket's length as --every takes it: "1d", "12h0m0s".
func period(ms int64) string {
	const day = 24 * 3600 * 1000
	if ms%day == 0 {
		return strconv.FormatInt(ms/day, 10) + "d"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// inHours writes seconds as hours with two decimals.
func inHours(seconds float64) string { return strconv.FormatFloat(seconds/3600, 'f', 2, 64) }

// writeUsageCSV writes one line per row, times in RFC 3339 and use in
// seconds, exact to the millisecond.
func writeUsageCSV(w io.Writer, rep sharqapi.UsageReport) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"from", "to", "queue", rep.By, "kind", "peer", "instance_seconds", "gpu_seconds"})
	for _, row := range rep.Rows {
		cw.Write([]string{time.UnixMilli(row.From).UTC().Format(time.RFC3339Nano), time.UnixMilli(row.To).UTC().Format(time.RFC3339Nano),
			row.Queue, row.Key, row.Kind, row.Peer, seconds(row.InstanceSeconds), seconds(row.GPUSeconds)})
	}
	cw.Flush()
	return cw.Error()
}

// seconds writes seconds with up to three decimals, as the server sent
// them.
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }
