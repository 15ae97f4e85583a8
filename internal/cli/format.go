package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// table writes aligned columns; flush writes them out.
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline in a reason would break the columns.
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flush writes the rows without the padding an empty last cell leaves.
func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		if _, err := io.WriteString(t.w, strings.TrimRight(body, " ")); err != nil {
			return err
		}
		if nl {
			io.WriteString(t.w, "\n")
		}
	}
	t.buf.Reset()
	return nil
}

// shortID is the last 8 characters of a job ID: enough to tell jobs apart
// in a table. Job IDs begin with their creation time (version 7 UUIDs), so
// the distinguishing part is the end.
func shortID(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}

// jobLabel is how every verb names a job in a sentence: its name and
// short ID, "train (0e5a91c2)".
func jobLabel(name, id string) string { return name + " (" + shortID(id) + ")" }

// age renders how long ago an epoch-milliseconds time was, coarsely.
func age(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return duration(now().Sub(time.UnixMilli(ms)))
}

// duration renders d with at most two units: 45s, 3m20s, 2h05m, 3d04h.
func duration(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

// clock renders an epoch-milliseconds time as local wall-clock time.
func clock(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Local().Format("2006-01-02 15:04:05")
}

// orDash shows "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// nameWidth is how much of a job name a table row shows: with it, a row's
// columns up to its age, but for CAPACITY, fit in about 80 columns.
// describe shows the whole name.
const nameWidth = 20

// squeeze cuts s to n runes by taking out its middle, as names made of
// parts (a model, a setting, a run) differ at both ends.
func squeeze(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 3 {
		return truncate(s, n)
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// Bar cells: a share's own use, capacity it lends out, capacity idle, and
// what it borrows beyond its limit (after a "+").
const (
	cellOwn      = "█"
	cellLent     = "░"
	cellIdle     = "·"
	cellBorrowed = "▒"
	maxBarCells  = 24
)

// bar draws a share's use of one unit, one cell per instance while that
// fits: "██░·+▒▒" is 2 own, 1 lent, 1 idle and 2 borrowed.
func bar(own, lent, idle, borrowed int) string {
	total := own + lent + idle + borrowed
	per := max(1, (total+maxBarCells-1)/maxBarCells) // instances per cell
	cells := func(n int) int { return (n + per - 1) / per }
	s := strings.Repeat(cellOwn, cells(own)) + strings.Repeat(cellLent, cells(lent)) + strings.Repeat(cellIdle, cells(idle))
	if borrowed > 0 {
		s += "+" + strings.Repeat(cellBorrowed, cells(borrowed))
	}
	return s
}

// plural writes "1 job" or "2 jobs".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// jobIDPattern matches the job IDs that reasons name.
var jobIDPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// nameJobs replaces the job IDs in a reason by the jobs' names, which
// people recognise, with the short ID to tell equal names apart.
func nameJobs(reason string, names map[string]string) string {
	return jobIDPattern.ReplaceAllStringFunc(reason, func(id string) string {
		if n, ok := names[id]; ok {
			return jobLabel(n, id)
		}
		return id
	})
}
