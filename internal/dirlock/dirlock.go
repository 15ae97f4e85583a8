// Package dirlock keeps a data directory to one server at a time: the
// server holds an exclusive flock on DIR/server.lock for its whole life,
// and the file says who holds it (its PID and address), so that a second
// server started on the directory can say which one is in the way.
//
// The kernel releases the lock when its holder exits, even on kill -9, so
// a crashed server never leaves the directory locked. Other programs that
// read or write the directory beside a server (the local executor's
// supervisor, sharq admin) do not take the lock.
package dirlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// FileName is the lock file's name in the data directory.
const FileName = "server.lock"

// Holder is what the lock file says about the server holding it.
type Holder struct {
	PID int `json:"pid"`
	// Addr is the address it listens on; empty while it starts.
	Addr string `json:"addr,omitempty"`
	// Listen is the address it was asked to listen on (its --listen),
	// which Addr makes exact once it listens.
	Listen string `json:"listen,omitempty"`
}

// where is how an error names the holder's address.
func (h Holder) where() string {
	switch {
	case h.Addr != "":
		return "listening on " + h.Addr
	case h.Listen != "":
		return "starting, to listen on " + h.Listen
	}
	return "address unknown"
}

// HeldError is a data directory that another server holds.
type HeldError struct {
	Dir    string
	Holder Holder // zero when the file could not be read
}

func (e *HeldError) Error() string {
	who := "another sharq serve"
	if e.Holder.PID != 0 {
		who = fmt.Sprintf("sharq serve pid %d (%s)", e.Holder.PID, e.Holder.where())
	}
	return fmt.Sprintf("data directory %s is in use by %s: stop it, or give this server another --data-dir", e.Dir, who)
}

// Lock is a data directory held by this process.
type Lock struct {
	f      *os.File
	holder Holder
}

// Acquire takes dir's lock for this process, which is to listen on
// listen, or returns a *HeldError naming the process that holds it.
func Acquire(dir, listen string) (*Lock, error) {
	path := filepath.Join(dir, FileName)
	// NB: os.OpenFile sets O_CLOEXEC: the processes this server starts
	// (the supervisor, jobs) do not inherit the lock and so cannot keep it
	// after the server has gone.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Dir: dir, Holder: readHolder(path)}
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	l := &Lock{f: f, holder: Holder{PID: os.Getpid(), Listen: listen}}
	if err := l.write(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// SetAddr records the address the server listens on, once it does.
func (l *Lock) SetAddr(addr string) error {
	l.holder.Addr = addr
	return l.write()
}

// Release gives the directory up.
func (l *Lock) Release() error { return l.f.Close() }

// write puts the holder in the file: the new text first, then the file
// cut to its length, so a reader never finds it empty once it has been
// written (at worst with old bytes after the JSON, which it ignores).
func (l *Lock) write() error {
	b, err := json.Marshal(l.holder)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("data directory lock: %w", err)
	}
	if err := l.f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("data directory lock: %w", err)
	}
	return nil
}

// readHolder reads who holds the lock at path. The holder writes the file
// just after it takes the lock, so an empty file is read again for a
// moment before it is given up as unknown.
func readHolder(path string) Holder {
	for range 20 {
		var h Holder
		f, err := os.Open(path)
		if err != nil {
			return Holder{}
		}
		err = json.NewDecoder(f).Decode(&h)
		f.Close()
		if err == nil && h.PID != 0 {
			return h
		}
		time.Sleep(25 * time.Millisecond)
	}
	return Holder{}
}
