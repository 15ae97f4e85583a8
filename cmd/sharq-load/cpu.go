package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// procCPU reads the user plus system CPU time a process has used.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// Fields 14 and 15 (utime, stime) of stat are the 12th and 13th after
	// the name.
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return time.Duration(u+st) * clockTick, nil
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter measures the CPU this process and the server (when its pid is
// known) use over a stretch of time.
type cpuMeter struct {
	pid          int
	wall         time.Time
	self, server time.Duration
	serverOK     bool
}

func startCPU(pid int) *cpuMeter {
	m := &cpuMeter{pid: pid, wall: time.Now(), self: selfCPU()}
	if pid > 0 {
		if c, err := procCPU(pid); err == nil {
			m.server, m.serverOK = c, true
		}
	}
	return m
}

// cpuUse is the CPU used since the meter started.
type cpuUse struct {
	Wall, Client, Server time.Duration
	ServerKnown          bool
}

func (m *cpuMeter) stop() cpuUse {
	u := cpuUse{Wall: time.Since(m.wall), Client: selfCPU() - m.self}
	if m.serverOK {
		if c, err := procCPU(m.pid); err == nil {
			u.Server, u.ServerKnown = c-m.server, true
		}
	}
	return u
}

// perRequest formats the CPU per request of n requests, and what the
// machine's CPUs could serve if they did nothing else.
func (u cpuUse) perRequest(n, cpus int) string {
	if n == 0 {
		return ""
	}
	client := u.Client / time.Duration(n)
	s := fmt.Sprintf("CPU per request: client %dµs", client.Microseconds())
	if u.ServerKnown {
		server := u.Server / time.Duration(n)
		s += fmt.Sprintf(", server %dµs; server used %.2f of %d CPUs", server.Microseconds(), u.Server.Seconds()/u.Wall.Seconds(), cpus)
		if server+client > 0 {
			s += fmt.Sprintf("; CPU-bound ceiling %.0f/s (server alone %.0f/s)",
				float64(cpus)/(server+client).Seconds(), float64(cpus)/server.Seconds())
		}
	}
	return s
}
