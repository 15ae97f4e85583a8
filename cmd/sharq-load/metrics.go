package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// cycleStats are the engine's cycles as the server's /metrics counts them
// (sharq_cycle_duration_seconds: apply, decide, commit, act), and the API
// reads that waited for them (sharq_engine_read_*).
type cycleStats struct {
	Count                  float64
	Sum                    float64 // seconds
	Reads, Waited, WaitSum float64
	Unlocked               float64 // describes served without the lock
}

func (c cycleStats) minus(o cycleStats) cycleStats {
	return cycleStats{Count: c.Count - o.Count, Sum: c.Sum - o.Sum,
		Reads: c.Reads - o.Reads, Waited: c.Waited - o.Waited, WaitSum: c.WaitSum - o.WaitSum, Unlocked: c.Unlocked - o.Unlocked}
}

// reads summarises how the engine's reads waited for its cycles.
func (c cycleStats) reads() string {
	if c.Reads <= 0 {
		if c.Unlocked > 0 {
			return fmt.Sprintf("%.0f reads of the engine, all without its lock", c.Unlocked)
		}
		return ""
	}
	return fmt.Sprintf("%.0f reads of the engine, %.0f of them without its lock; of the others %.1f %% waited for a cycle; %s of waiting per read",
		c.Reads+c.Unlocked, c.Unlocked, 100*c.Waited/c.Reads, fmtDur(time.Duration(c.WaitSum/c.Reads*float64(time.Second))))
}

// describe summarises the cycles that served n requests.
func (c cycleStats) describe(n int) string {
	if c.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f cycles, %.1f requests per cycle, mean cycle %s",
		c.Count, float64(n)/c.Count, fmtDur(time.Duration(c.Sum/c.Count*float64(time.Second))))
}

// scrapeCycles reads the cycle histogram's count and sum, and the read
// counters when there are any, from the server's /metrics; false when the
// server does not serve the cycles.
func scrapeCycles(endpoint string) (cycleStats, bool) {
	if endpoint == "" {
		return cycleStats{}, false
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(endpoint + "/metrics")
	if err != nil {
		return cycleStats{}, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return cycleStats{}, false
	}
	var c cycleStats
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "sharq_cycle_duration_seconds_count":
			c.Count, _ = strconv.ParseFloat(value, 64)
			found++
		case "sharq_cycle_duration_seconds_sum":
			c.Sum, _ = strconv.ParseFloat(value, 64)
			found++
		case "sharq_engine_reads_total":
			c.Reads, _ = strconv.ParseFloat(value, 64)
		case "sharq_engine_read_waits_total":
			c.Waited, _ = strconv.ParseFloat(value, 64)
		case "sharq_engine_read_wait_seconds_total":
			c.WaitSum, _ = strconv.ParseFloat(value, 64)
		case "sharq_engine_unlocked_reads_total":
			c.Unlocked, _ = strconv.ParseFloat(value, 64)
		}
	}
	return c, found == 2
}
