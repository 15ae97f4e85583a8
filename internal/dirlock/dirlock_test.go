package dirlock_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/dirlock"
)

// Ensure a second holder of a directory is refused with the first's PID
// and address (the one it will listen on, then the one it does), and that
// the directory is free again once the first releases it.
func TestAcquire(t *testing.T) {
	dir := t.TempDir()
	first, err := dirlock.Acquire(dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = dirlock.Acquire(dir, "127.0.0.1:9")
	var held *dirlock.HeldError
	if !errors.As(err, &held) || held.Holder != (dirlock.Holder{PID: os.Getpid(), Listen: "127.0.0.1:0"}) {
		t.Fatalf("second Acquire: %v (%+v), want it held by this process, starting on 127.0.0.1:0", err, held)
	}
	if want := fmt.Sprintf("pid %d (starting, to listen on 127.0.0.1:0)", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if err := first.SetAddr("127.0.0.1:41234"); err != nil {
		t.Fatal(err)
	}
	_, err = dirlock.Acquire(dir, "127.0.0.1:9")
	if want := fmt.Sprintf("pid %d (listening on 127.0.0.1:41234)", os.Getpid()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second Acquire once the first listens: %v, want it to say %q", err, want)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := dirlock.Acquire(dir, "127.0.0.1:9")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	second.Release()
}

// Ensure the file says the holder's PID, address and --listen in JSON.
func TestLockFile(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dir, "[2001:db8:ffff:ffff:ffff:ffff:ffff:1]:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.SetAddr("[::1]:1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/" + dirlock.FileName)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"pid":%d,"addr":"[::1]:1","listen":"[2001:db8:ffff:ffff:ffff:ffff:ffff:1]:8080"}`+"\n", os.Getpid())
	if string(b) != want {
		t.Errorf("lock file %q, want %q", b, want)
	}
}
