package local

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bootID identifies the current boot, so that pids recorded before a reboot
// are never signalled.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStat is the part of /proc/<pid>/stat the executor needs.
type procStat struct {
	State   byte
	PPID    int
	PGID    int
	Session int
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// NB: the command name may hold spaces and parentheses; the fields
	// after it start past the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	var ps procStat
	ps.State = f[0][0]
	ps.PPID, _ = strconv.Atoi(f[1])
	ps.PGID, _ = strconv.Atoi(f[2])
	ps.Session, _ = strconv.Atoi(f[3])
	return ps, nil
}

// eachProc calls fn for every live (not zombie) process.
func eachProc(fn func(pid int, ps procStat)) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		ps, err := readProcStat(pid)
		if err != nil || ps.State == 'Z' {
			continue
		}
		fn(pid, ps)
	}
}

// killSession SIGKILLs what is left of a dead supervisor's session and
// waits (a few seconds at most) until it is gone, so that the attempt's
// resources are free when it is reported ended. While any process has
// session id sid, the kernel keeps the pid sid allocated, so a process that
// has it as session id is ours, provided the supervisor itself (pid sid) is
// gone: a live process with that pid is someone else's.
func killSession(sid int) (killed int) {
	if sid <= 1 {
		return 0
	}
	if ps, err := readProcStat(sid); err == nil && ps.State != 'Z' {
		return 0
	}
	for range 150 {
		n := 0
		eachProc(func(pid int, ps procStat) {
			if ps.Session == sid {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		})
		if n == 0 {
			break
		}
		killed = max(killed, n)
		time.Sleep(20 * time.Millisecond)
	}
	return killed
}
