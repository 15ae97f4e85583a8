package core_test

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestScenarios runs the behaviour cases in testdata/scenarios. Rewrite the
// expected output with -rewrite, and review every diff.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			w := newWorld()
			datadriven.RunTest(t, path, w.handle)
		})
	}
}

// world drives a core from scenario commands. Time starts at t0 and each
// step advances it by one second unless the step says at= or same-instant.
type world struct {
	c       *core.Core
	now     time.Duration
	seq     int64
	lastQ   string
	t0      time.Time
	history []string
}

func newWorld() *world {
	return &world{c: core.New(), t0: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)}
}

func (w *world) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "apply":
		return w.applyLines(d.Input)
	case "step":
		// Each step is one second after the last, unless it says at= or
		// same-instant (a second cycle at the instant of the last).
		if !d.HasArg("same-instant") {
			w.now += time.Second
		}
		for _, a := range d.CmdArgs {
			if a.Key == "at" {
				dur, err := time.ParseDuration(a.Vals[0])
				if err != nil {
					d.Fatalf(t, "bad at: %v", err)
				}
				w.now = dur
			}
		}
		var out strings.Builder
		out.WriteString(w.applyLines(d.Input))
		ds := w.c.Step(w.t0.Add(w.now))
		out.WriteString(ds.String())
		if out.Len() == 0 {
			return "no change\n"
		}
		return out.String()
	case "job":
		var b strings.Builder
		for _, line := range strings.Fields(d.Input) {
			st, ok := w.c.Job(line)
			if !ok {
				fmt.Fprintf(&b, "%s: gone\n", line)
				continue
			}
			if st.Dispatched {
				fmt.Fprintf(&b, "%s: dispatched share=%s prio=%d preempted=%d\n", line, st.Share, st.Priority, st.Preempted)
				continue
			}
			fmt.Fprintf(&b, "%s: runnable share=%s prio=%d position=%d preempted=%d reason=%q\n", line, st.Share, st.Priority, st.Position, st.Preempted, st.Reason.String())
		}
		return b.String()
	case "front":
		q := w.arg(d, "queue", w.lastQ)
		var b strings.Builder
		fmt.Fprintf(&b, "queue: %s\n", strings.Join(w.c.QueueFront(q, 100), " "))
		for _, su := range w.c.Usage(q) {
			if su.Share != "" {
				fmt.Fprintf(&b, "%s: %s\n", su.Share, strings.Join(w.c.ShareFront(q, su.Share, 1), " "))
			}
		}
		return b.String()
	case "env":
		// The service environment's limit and use per unit.
		var b strings.Builder
		for _, u := range w.c.EnvUsage(d.CmdArgs[0].Key) {
			fmt.Fprintf(&b, "%s limit=%d used=%d free=%d\n", u.Unit, u.Limit, u.Used, u.Idle)
		}
		return b.String()
	case "usage":
		q := w.arg(d, "queue", w.lastQ)
		var b strings.Builder
		for _, su := range w.c.Usage(q) {
			for _, u := range su.Units {
				fmt.Fprintf(&b, "%s %s limit=%d used=%d own=%d borrowed=%d lent=%d idle=%d\n",
					su.Share, u.Unit, u.Limit, u.Used, u.Own, u.Borrowed, u.Lent, u.Idle)
			}
		}
		return b.String()
	case "fair":
		// Each share identifier's weight, decayed usage and holdings.
		var b strings.Builder
		for _, u := range w.c.FairUsages(w.arg(d, "queue", w.lastQ)) {
			fmt.Fprintf(&b, "%s weight=%g usage=%.1f window=%d held=%d active=%t\n", u.Share, u.Weight, u.Usage, u.Window, u.Held, u.Active)
		}
		return b.String()
	case "holdings":
		return w.holdings(t, d)
	case "wake":
		// When the core wants its next Step, after the scenario's start.
		at, ok := w.c.NextWake()
		if !ok {
			return "none\n"
		}
		return fmt.Sprintf("at %v\n", at.Sub(w.t0))
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

func (w *world) arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

// applyLines applies one event per line and reports only errors.
func (w *world) applyLines(input string) string {
	var b strings.Builder
	for _, line := range strings.Split(input, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ev, err := w.parse(line)
		if err == nil {
			err = w.c.Apply(ev)
		}
		if q, ok := ev.(core.PutQueue); ok && err == nil {
			w.lastQ = q.Name // later lines default to the last queue set up
		}
		if err != nil {
			fmt.Fprintf(&b, "error: %s: %v\n", line, err)
		}
	}
	return b.String()
}

type fields struct {
	name  string
	kv    map[string]string
	flags map[string]bool
}

func parseFields(line string) (string, fields) {
	parts := strings.Fields(line)
	f := fields{kv: map[string]string{}, flags: map[string]bool{}}
	for _, p := range parts[1:] {
		if k, v, ok := strings.Cut(p, "="); ok {
			f.kv[k] = v
		} else if f.name == "" && !isFlag(p) {
			f.name = p
		} else {
			f.flags[p] = true
		}
	}
	return parts[0], f
}

func isFlag(s string) bool {
	switch s {
	case "disabled", "inshare", "quota", "requeue", "fair":
		return true
	}
	return false
}

func (f fields) int(key string, def int) (int, error) {
	v, ok := f.kv[key]
	if !ok {
		return def, nil
	}
	return strconv.Atoi(v)
}

func parseUnits(s string) ([]core.UnitCount, error) {
	if s == "" {
		return nil, nil
	}
	var out []core.UnitCount
	for _, p := range strings.Split(s, ",") {
		u, n, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("bad units %q", p)
		}
		c, err := strconv.Atoi(n)
		if err != nil {
			return nil, err
		}
		out = append(out, core.UnitCount{Unit: u, Count: c})
	}
	return out, nil
}

func (w *world) parse(line string) (core.Event, error) {
	cmd, f := parseFields(line)
	units, err := parseUnits(f.kv["limits"] + f.kv["units"])
	if err != nil {
		return nil, err
	}
	switch cmd {
	case "env":
		return core.PutEnv{Name: f.name, Limits: units, Disabled: f.flags["disabled"]}, nil
	case "queue":
		prio, err := f.int("prio", 0)
		if err != nil {
			return nil, err
		}
		fair, err := parseFair(f)
		return core.PutQueue{Name: f.name, Env: f.kv["env"], QuotaShares: f.flags["quota"], Priority: prio, Disabled: f.flags["disabled"], Fair: fair}, err
	case "share":
		strategy, err := core.ParseStrategy(f.kv["strategy"])
		if err != nil {
			return nil, err
		}
		borrow, err := f.int("borrow", core.UnlimitedBorrow)
		if err != nil {
			return nil, err
		}
		var minRuntime time.Duration
		if v, ok := f.kv["min"]; ok {
			if minRuntime, err = time.ParseDuration(v); err != nil {
				return nil, err
			}
		}
		return core.PutShare{Queue: w.queue(f), Name: f.name, Limits: units, Strategy: strategy, BorrowLimit: borrow,
			InSharePreemption: f.flags["inshare"], Disabled: f.flags["disabled"], MinRuntime: minRuntime}, nil
	case "delete-env":
		return core.DeleteEnv{Name: f.name}, nil
	case "delete-queue":
		return core.DeleteQueue{Name: f.name}, nil
	case "delete-share":
		return core.DeleteShare{Queue: w.queue(f), Name: f.name}, nil
	case "submit":
		prio, err := f.int("prio", 0)
		if err != nil {
			return nil, err
		}
		retries, err := f.int("retries", -1)
		if err != nil {
			return nil, err
		}
		// Queue time is the step's time, plus a sequence number so that
		// jobs submitted together keep their order; queued= sets it.
		w.seq++
		queued := w.t0.Add(w.now).UnixNano() + w.seq
		if v, ok := f.kv["queued"]; ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, err
			}
			queued = w.t0.Add(d).UnixNano()
		}
		return core.Submit{Job: f.kv["id"], Queue: w.queue(f), Share: f.kv["share"], Demand: units, Priority: prio,
			QueuedAt: queued, PreemptionRetries: retries}, nil
	case "priority":
		prio, err := f.int("prio", 0)
		return core.SetPriority{Job: f.kv["id"], Priority: prio}, err
	case "end":
		return core.AttemptEnded{Job: f.kv["id"], Requeue: f.flags["requeue"]}, nil
	case "terminate":
		return core.Terminate{Job: f.kv["id"]}, nil
	case "set-usage":
		u, err := strconv.ParseFloat(f.kv["usage"], 64)
		return core.SetUsage{Queue: w.queue(f), Share: f.kv["share"], Usage: u, At: w.t0.Add(w.now).UnixNano()}, err
	}
	return nil, fmt.Errorf("unknown event %q", cmd)
}

func (w *world) queue(f fields) string {
	if q, ok := f.kv["queue"]; ok {
		return q
	}
	return w.lastQ
}

// holdings prints whose capacity each dispatched job of the queue holds,
// then how each share's borrowed and lent capacity splits by share
// ("none": the capacity beyond all share limits).
func (w *world) holdings(t *testing.T, d *datadriven.TestData) string {
	q := w.arg(d, "queue", w.lastQ)
	lender := func(s string) string { return cmp.Or(s, "none") }
	var b strings.Builder
	all := w.c.Holdings(q)
	var ids []string
	for _, h := range all {
		ids = append(ids, h.Job)
	}
	some := w.c.HoldingsOf(append(ids, "unknown"))
	if len(some) != len(all) {
		d.Fatalf(t, "HoldingsOf gives %d holdings, Holdings %d", len(some), len(all))
	}
	for _, h := range all {
		if fmt.Sprint(some[h.Job]) != fmt.Sprint(h) {
			d.Fatalf(t, "HoldingsOf(%s) = %+v, Holdings says %+v", h.Job, some[h.Job], h)
		}
		fmt.Fprintf(&b, "%s share=%s", h.Job, h.Share)
		for _, o := range h.Own {
			fmt.Fprintf(&b, " own=%s", o)
		}
		for _, l := range h.Loans {
			fmt.Fprintf(&b, " borrowed=%s:%d from=%s", l.Unit, l.Count, lender(l.Lender))
			if l.Reclaimable {
				b.WriteString(" reclaimable")
			}
		}
		b.WriteByte('\n')
	}
	for _, su := range w.c.Usage(q) {
		for _, u := range su.Units {
			for _, c := range u.BorrowedFrom {
				fmt.Fprintf(&b, "%s %s borrows %d from %s\n", su.Share, u.Unit, c.Count, lender(c.Share))
			}
			for _, c := range u.LentTo {
				fmt.Fprintf(&b, "%s %s lends %d to %s\n", su.Share, u.Unit, c.Count, c.Share)
			}
		}
	}
	return b.String()
}

// parseFair reads a fair-share policy: the flag fair, with decay=<seconds>,
// reserve=<percent> and weights=<identifier>:<weight>,... (an identifier
// may end in '*').
func parseFair(f fields) (*core.FairShare, error) {
	if !f.flags["fair"] {
		return nil, nil
	}
	decay, err := f.int("decay", 0)
	if err != nil {
		return nil, err
	}
	reserve, err := f.int("reserve", 0)
	if err != nil {
		return nil, err
	}
	fs := &core.FairShare{DecaySeconds: decay, Reservation: reserve}
	if ws := f.kv["weights"]; ws != "" {
		for _, p := range strings.Split(ws, ",") {
			id, v, _ := strings.Cut(p, ":")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, err
			}
			fs.Weights = append(fs.Weights, core.ShareWeight{Identifier: id, Weight: x})
		}
	}
	return fs, nil
}
