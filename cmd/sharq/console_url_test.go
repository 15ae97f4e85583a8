package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure `sharq serve` says where its console is when it starts serving.
func TestServeSaysWhereTheConsoleIs(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, []string{"--listen", "127.0.0.1:0", "--executor", "simulated", "--data-dir", t.TempDir()}, &out, &out)
	}()
	var rec struct{ Msg, Addr, Scheme, Console string }
	testwait.Until(t, 15*time.Second, func() error {
		for _, l := range strings.Split(out.String(), "\n") {
			if json.Unmarshal([]byte(l), &rec) == nil && rec.Msg == "serving" {
				return nil
			}
		}
		return fmt.Errorf("no serving line:\n%s", out.String())
	})
	if want := rec.Scheme + "://" + rec.Addr + "/"; rec.Scheme != "http" || rec.Console != want {
		t.Errorf("console %q, want %q", rec.Console, want)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	for addr, want := range map[string]string{"0.0.0.0:8080": "http://localhost:8080/", "[::]:80": "http://localhost:80/", "[::1]:8080": "http://[::1]:8080/"} {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := consoleURL("http", a); got != want {
			t.Errorf("consoleURL(%s) = %q, want %q", addr, got, want)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
