package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

// Ensure --auth auto is open without keys and SigV4 with one, an open
// server refuses to listen beyond loopback unless told, and the server key
// is made once with mode 0600.
func TestOpenGate(t *testing.T) {
	withKey := &accesstest.Keys{}
	withKey.CreateKey(t.Context(), access.StoredKey{ID: "SKIA1", Name: "admin"})
	for name, tc := range map[string]struct {
		mode, listen string
		insecure     bool
		keys         access.KeyStore
		want         string // the authenticator's type, or the error's start
	}{
		"AutoNoKeys":       {"auto", "127.0.0.1:8080", false, &accesstest.Keys{}, "access.AnonymousAuthenticator"},
		"AutoKeys":         {"auto", "127.0.0.1:8080", false, withKey, "*sigv4.Verifier"},
		"SigV4NoKeys":      {"sigv4", "[::1]:0", false, &accesstest.Keys{}, "*sigv4.Verifier"},
		"NoneLoopback":     {"none", "localhost:8080", false, withKey, "access.AnonymousAuthenticator"},
		"NoneEverywhere":   {"none", ":8080", false, &accesstest.Keys{}, "refusing to serve :8080 without authentication"},
		"NoneInsecureOpen": {"none", "0.0.0.0:8080", true, &accesstest.Keys{}, "access.AnonymousAuthenticator"},
		"AutoKeysAnywhere": {"auto", "0.0.0.0:8080", false, withKey, "*sigv4.Verifier"},
		"UnknownMode":      {"basic", "127.0.0.1:8080", false, withKey, `--auth "basic"`},
		"AutoNoKeysBeyond": {"auto", "10.0.0.1:8080", false, &accesstest.Keys{}, "refusing"},
		// A store that keeps no keys can only be open.
		"AutoNoKeyStore":  {"auto", "127.0.0.1:8080", false, nil, "access.AnonymousAuthenticator"},
		"SigV4NoKeyStore": {"sigv4", "127.0.0.1:8080", false, nil, "--auth sigv4: this store keeps no access keys"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs syncBuffer
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel() // ends --insecure-open's warnings
			cfg := serveConfig{listen: tc.listen, dataDir: t.TempDir(), region: "us-east-1", accountID: "000000000000",
				auth: authConfig{mode: tc.mode, insecureOpen: tc.insecure}}
			g, err := openGate(ctx, cfg, tc.keys, slog.New(slog.NewTextHandler(&logs, nil)))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprintf("%T", g.authn)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if got == "access.AnonymousAuthenticator" && !strings.Contains(logs.String(), "authentication is off") {
				t.Errorf("an open server did not say so: %s", logs.String())
			}
		})
	}
}

func TestServerKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", "server.key")
	a, err := loadServerKey(path)
	if err != nil || len(a) != access.ServerKeySize {
		t.Fatalf("first load: %d bytes, %v", len(a), err)
	}
	b, err := loadServerKey(path)
	if err != nil || !bytes.Equal(a, b) {
		t.Errorf("second load: %v", err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := loadServerKey(path); err == nil {
		t.Error("a 5-byte key was taken")
	}
}

// syncBuffer is a bytes.Buffer that a logging goroutine may write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
