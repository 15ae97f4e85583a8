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
// (sharq_cycle_duration_seconds: apply, decide, commit, act).
type cycleStats struct {
	Count float64
	Sum   float64 // seconds
}

func (c cycleStats) minus(o cycleStats) cycleStats {
	return cycleStats{Count: c.Count - o.Count, Sum: c.Sum - o.Sum}
}

// describe summarises the cycles that served n requests.
func (c cycleStats) describe(n int) string {
	if c.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f cycles, %.1f requests per cycle, mean cycle %s",
		c.Count, float64(n)/c.Count, fmtDur(time.Duration(c.Sum/c.Count*float64(time.Second))))
}

// scrapeCycles reads the cycle histogram's count and sum from the server's
// /metrics; false when the server does not serve them.
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
		}
	}
	return c, found == 2
}
