//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used. On a machine shared
// with other work it measures the cost of a benchmark better than the wall
// clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
