package main

import (
	"context"
	"sync"
	"time"
)

// hammerResult is what a closed-loop run measured inside its window.
type hammerResult struct {
	OK, Errors int
	Window     time.Duration
	Latencies  []time.Duration
	FirstErr   error
	CPU        cpuUse // over the window
	Cycles     cycleStats
}

// Rate is requests answered successfully per second of the window.
func (r hammerResult) Rate() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.OK) / r.Window.Seconds()
}

// hammer runs clients goroutines, each calling fn in a loop (a closed
// loop: a client sends its next request when the last is answered), for
// warmup and then the window. Only requests that end inside the window
// count. fn gets the client's number and its request count so far.
// serverPid, when not 0, is the server's process, whose CPU use over the
// window is measured too.
// endpoint, when not "", is the server's, whose engine cycles over the
// window are read from its /metrics.
func hammer(ctx context.Context, clients int, warmup, window time.Duration, serverPid int, endpoint string, fn func(ctx context.Context, client, n int) error) hammerResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	from, to := start.Add(warmup), start.Add(warmup+window)
	cpu := make(chan cpuUse, 1)
	cycles := make(chan cycleStats, 1)
	go func() {
		time.Sleep(time.Until(from))
		m := startCPU(serverPid)
		c0, ok0 := scrapeCycles(endpoint)
		time.Sleep(time.Until(to))
		cpu <- m.stop()
		c1, ok1 := scrapeCycles(endpoint)
		if ok0 && ok1 {
			cycles <- c1.minus(c0)
		} else {
			cycles <- cycleStats{}
		}
	}()
	type part struct {
		ok, errs int
		lat      []time.Duration
		err      error
	}
	parts := make([]part, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[c]
			for n := 0; ; n++ {
				t0 := time.Now()
				if !t0.Before(to) || ctx.Err() != nil {
					return
				}
				err := fn(ctx, c, n)
				t1 := time.Now()
				if t1.Before(from) || t1.After(to) {
					continue
				}
				if err != nil {
					p.errs++
					if p.err == nil {
						p.err = err
					}
					continue
				}
				p.ok++
				p.lat = append(p.lat, t1.Sub(t0))
			}
		}()
	}
	wg.Wait()
	r := hammerResult{Window: window, CPU: <-cpu, Cycles: <-cycles}
	for _, p := range parts {
		r.OK += p.ok
		r.Errors += p.errs
		r.Latencies = append(r.Latencies, p.lat...)
		if r.FirstErr == nil {
			r.FirstErr = p.err
		}
	}
	return r
}
