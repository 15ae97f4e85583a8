package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"
)

// A job is dispatched when its status is one of these.
var dispatched = map[string]bool{"SCHEDULED": true, "STARTING": true, "RUNNING": true, "SUCCEEDED": true}

// latencySample is one job's way to SCHEDULED, seen from the client.
type latencySample struct {
	answer   time.Duration // submit call until its answer
	observed time.Duration // submit call until the client knows the job is SCHEDULED, durably
	decided  time.Duration // submit call until the server's scheduledAt (ms resolution)
}

// measureOne submits a job and finds when it became SCHEDULED. The engine
// commits a cycle before it answers the requests in it, so when the
// describe that follows the answer shows the job dispatched in the cycle
// that created it (scheduledAt == createdAt), it was SCHEDULED and durable
// by the time of the answer. Otherwise the job is described until it is,
// and the describe that first shows it ends the wait.
func measureOne(ctx context.Context, c *client, spec jobSpec) (latencySample, error) {
	t0 := time.Now()
	id, err := c.submit(ctx, spec)
	if err != nil {
		return latencySample{}, err
	}
	t1 := time.Now()
	s := latencySample{answer: t1.Sub(t0)}
	for {
		v, err := c.describe(ctx, id)
		if err != nil {
			return s, err
		}
		t2 := time.Now()
		if dispatched[v.Status] || v.ScheduledAt > 0 {
			s.decided = time.UnixMilli(v.ScheduledAt).Sub(t0.Truncate(time.Millisecond))
			s.observed = t2.Sub(t0)
			if v.ScheduledAt == v.CreatedAt {
				s.observed = s.answer
			}
			return s, nil
		}
		if t2.Sub(t0) > 30*time.Second {
			return s, fmt.Errorf("job %s not SCHEDULED after 30 s (status %s)", id, v.Status)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func runLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var l loadFlags
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l.register(fs, 1)
	n := fs.Int("n", 2000, "jobs to measure, over all clients")
	interval := fs.Duration("interval", 2*time.Millisecond, "pause of each client between jobs")
	if err := fs.Set("capacity", "1000000"); err != nil {
		return err
	}
	if err := fs.Set("runtime-ms", "20"); err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	c, proc, stop, err := l.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	// Warm the connections and the server's first cycles.
	for i := range 50 {
		if _, err := measureOne(ctx, c, l.job(*n+i)); err != nil {
			return err
		}
	}
	before := machine()
	var mu sync.Mutex
	var answer, observed, decided []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	per := (*n + l.clients - 1) / l.clients
	for w := range l.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				s, err := measureOne(ctx, c, l.job(w*per+i))
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				answer, observed, decided = append(answer, s.answer), append(observed, s.observed), append(decided, s.decided)
				mu.Unlock()
				time.Sleep(*interval)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Fprintf(stdout, "submit-to-SCHEDULED (%s, %d clients, %v pause, capacity free):\n", l.client(), l.clients, *interval)
	fmt.Fprintf(stdout, "  observed durable: %s\n", summarize(observed))
	fmt.Fprintf(stdout, "  submit answered:  %s\n", summarize(answer))
	fmt.Fprintf(stdout, "  scheduledAt (ms): %s\n", summarize(decided))
	if proc != nil {
		if rss, peak, err := proc.memory(); err == nil {
			fmt.Fprintf(stdout, "  server RSS %d MiB (peak %d MiB)\n", rss>>20, peak>>20)
		}
	}
	fmt.Fprintf(stdout, "  machine: %s before; %s after\n", before, loadNow())
	return nil
}
