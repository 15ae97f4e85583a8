package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// How close the server's start estimates come: while a run goes on, the
// estimates route is polled and each job's first estimate kept; after it,
// each is compared with when the job was first dispatched. The first
// estimate is the one its submitter would have seen: made, at most one
// estimate computation after the submission, from what the server knew
// then (not the jobs submitted later).

// etaWatch polls GET /sharq/v1/estimates and keeps each job's first
// estimate.
type etaWatch struct {
	c        *client
	interval time.Duration

	mu     sync.Mutex
	first  map[string]sharqapi.JobEstimate
	polls  int
	errors int
	err    error // the last error
}

func newETAWatch(c *client, interval time.Duration) *etaWatch {
	return &etaWatch{c: c, interval: interval, first: map[string]sharqapi.JobEstimate{}}
}

// run polls until ctx ends.
func (w *etaWatch) run(ctx context.Context) {
	var since int64
	for {
		next, err := w.poll(ctx, since)
		w.mu.Lock()
		w.polls++
		if err != nil && ctx.Err() == nil {
			w.errors++
			w.err = err
		} else {
			since = next
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.interval):
		}
	}
}

// poll reads the estimates made after since and keeps those of jobs seen
// for the first time; it returns when the estimates it read were made.
func (w *etaWatch) poll(ctx context.Context, since int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.c.endpoint+sharqapi.EstimatesPath+"?since="+strconv.FormatInt(since, 10), nil)
	if err != nil {
		return since, err
	}
	resp, err := w.c.hc.Do(req)
	if err != nil {
		return since, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return since, fmt.Errorf("%s: %d %s", sharqapi.EstimatesPath, resp.StatusCode, b)
	}
	var out sharqapi.Estimates
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return since, err
	}
	if out.Unchanged || out.EstimatedAt == 0 {
		return since, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range out.Jobs {
		if _, seen := w.first[j.JobID]; !seen {
			w.first[j.JobID] = j
		}
	}
	return out.EstimatedAt, nil
}

// etaResult is how the first estimates compare with the first dispatches.
type etaResult struct {
	Compared int     // jobs estimated to start before they were first dispatched
	AbsError summary // |actual - estimated| of those
	// Late is the median of actual - estimated: above 0, jobs started
	// later than estimated.
	Late time.Duration
	// Wait is the median time from the estimate to the actual start: what
	// there was to estimate.
	Wait                      time.Duration
	NotWithin, NoBasis, Never int // first estimates of these kinds
	Unseen                    int // jobs dispatched before any estimate of them was read
	Polls, PollErrors         int
	LastErr                   error
}

// compare sets each job's first estimate against its first dispatch.
func (w *etaWatch) compare(subs []submission, views []jobView) etaResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := etaResult{Polls: w.polls, PollErrors: w.errors, LastErr: w.err}
	var abs, late, wait []time.Duration
	for i, s := range subs {
		if s.err != nil {
			continue
		}
		started := views[i].firstDispatch()
		e, ok := w.first[s.id]
		if !ok || started == 0 || e.EstimatedAt > started {
			r.Unseen++
			continue
		}
		switch e.Kind {
		case "ESTIMATED":
			d := time.Duration(started-e.At) * time.Millisecond
			late = append(late, d)
			abs = append(abs, max(d, -d))
			wait = append(wait, time.Duration(started-e.EstimatedAt)*time.Millisecond)
		case "NOT_WITHIN":
			r.NotWithin++
		case "NO_BASIS":
			r.NoBasis++
		case "NEVER":
			r.Never++
		}
	}
	r.Compared = len(abs)
	r.AbsError = summarize(abs)
	r.Late = median(late)
	r.Wait = median(wait)
	return r
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

func (r etaResult) print(out io.Writer) {
	fmt.Fprintf(out, "start estimates (each job's first, against its first dispatch): %d compared: |error| p50 %s p90 %s mean %s; "+
		"median lateness %s; median wait from the estimate %s\n",
		r.Compared, fmtDur(r.AbsError.P50), fmtDur(r.AbsError.P90), fmtDur(r.AbsError.Mean), fmtSigned(r.Late), fmtDur(r.Wait))
	fmt.Fprintf(out, "  first estimates without a time: %d no basis, %d not within the horizon, %d never; "+
		"%d jobs dispatched before an estimate was read; %d polls, %d failed", r.NoBasis, r.NotWithin, r.Never, r.Unseen, r.Polls, r.PollErrors)
	if r.LastErr != nil {
		fmt.Fprintf(out, " (last: %v)", r.LastErr)
	}
	fmt.Fprintln(out)
}

func fmtSigned(d time.Duration) string {
	if d < 0 {
		return "-" + fmtDur(-d)
	}
	return fmtDur(d)
}
