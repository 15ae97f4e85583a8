package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// summary describes a sample of durations.
type summary struct {
	Count                    int
	Mean, P50, P90, P99, Max time.Duration
}

// summarize sorts d in place and summarises it. Percentiles are nearest
// rank: the smallest value at least p of the sample does not exceed.
func summarize(d []time.Duration) summary {
	if len(d) == 0 {
		return summary{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return summary{
		Count: len(d), Mean: sum / time.Duration(len(d)),
		P50: percentile(d, 0.50), P90: percentile(d, 0.90), P99: percentile(d, 0.99), Max: d[len(d)-1],
	}
}

// percentile returns the nearest-rank p-quantile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

func (s summary) String() string {
	return fmt.Sprintf("n=%d mean=%s p50=%s p90=%s p99=%s max=%s",
		s.Count, fmtDur(s.Mean), fmtDur(s.P50), fmtDur(s.P90), fmtDur(s.P99), fmtDur(s.Max))
}

// fmtDur prints a duration in ms with three significant figures or so.
func fmtDur(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}

// machineInfo is the machine a measurement ran on.
type machineInfo struct {
	CPUs  int
	Model string
	Load  [3]float64 // 1, 5 and 15 minute load averages
}

func machine() machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), Model: "unknown", Load: loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func loadavg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

func (m machineInfo) String() string {
	return fmt.Sprintf("%d CPUs (%s), load average %.2f %.2f %.2f", m.CPUs, m.Model, m.Load[0], m.Load[1], m.Load[2])
}

// loadNow is the 1-minute load average, for a result line.
func loadNow() string {
	return fmt.Sprintf("load %.2f", loadavg()[0])
}
