package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Files of an attempt directory; doc.go describes them.
const (
	attemptFile = "attempt.json"
	launchFile  = "launch.json"
	stateFile   = "state.json"
	stopFile    = "stop.json"
	lockFile    = "lock"
	logsDir     = "logs"
)

// Scheduled is the state Attempts reports for an attempt that waits for
// GPUs: nothing of it runs yet.
const Scheduled executor.State = "SCHEDULED"

// transition is one change of state, as the supervisor (or, when none runs,
// the executor) recorded it.
type transition struct {
	State    executor.State `json:"state"`
	Reason   string         `json:"reason,omitempty"`
	ExitCode int            `json:"exit_code,omitempty"`
	At       time.Time      `json:"at"`
}

// hostProc names an instance's process; its pid is also its process group.
type hostProc struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// status is the content of state.json.
type status struct {
	Supervisor int          `json:"supervisor_pid,omitempty"`
	BootID     string       `json:"boot_id,omitempty"`
	Hosts      []hostProc   `json:"hosts,omitempty"`
	History    []transition `json:"history"`
	// Data is what the after phase did, once it is done.
	Data *dataOutcome `json:"data,omitempty"`
}

func (s *status) last() (transition, bool) {
	if len(s.History) == 0 {
		return transition{}, false
	}
	return s.History[len(s.History)-1], true
}

func (s *status) ended() bool {
	t, ok := s.last()
	return ok && t.State.Terminal()
}

// stopRequest is the content of stop.json.
type stopRequest struct {
	Reason string        `json:"reason"`
	Grace  time.Duration `json:"grace"`
}

// record is the content of attempt.json.
type record struct {
	Attempt executor.Attempt `json:"attempt"`
	Created time.Time        `json:"created"`
}

// writeJSON replaces dir/name atomically (temporary file and rename), so
// that readers, which may be another process, never see a partial file.
func writeJSON(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// readStatus reads state.json; a missing file is an empty status (the
// supervisor has not started yet).
func readStatus(dir string) (status, error) {
	var st status
	err := readJSON(filepath.Join(dir, stateFile), &st)
	if errors.Is(err, fs.ErrNotExist) {
		return status{}, nil
	}
	return st, err
}

// lockHeld tells whether the live supervisor holds the attempt's lock. The
// kernel drops a flock when its holder dies, so this cannot be fooled by a
// reused pid.
func lockHeld(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check lock: %w", err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("check lock: %w", err)
	}
	return false, nil
}

// takeLock creates and locks the attempt's lock file for the attempt's
// hand-over; the supervisor receives the locked file.
func takeLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("take lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("take lock: %w", err)
	}
	return f, nil
}
