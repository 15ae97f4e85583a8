package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure --auth auto is open without keys (until the first is made) and
// SigV4 with one, an open server refuses to listen beyond loopback unless told, and the server key
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
		"AutoNoKeys":       {"auto", "127.0.0.1:8080", false, &accesstest.Keys{}, "*main.firstKeyGate"},
		"AutoKeys":         {"auto", "127.0.0.1:8080", false, withKey, "*sigv4.Verifier"},
		"SigV4NoKeys":      {"sigv4", "[::1]:0", false, &accesstest.Keys{}, "*sigv4.Verifier"},
		"NoneLoopback":     {"none", "localhost:8080", false, withKey, "access.AnonymousAuthenticator"},
		"NoneEverywhere":   {"none", ":8080", false, &accesstest.Keys{}, "refusing to serve :8080 without authentication"},
		"NoneInsecureOpen": {"none", "0.0.0.0:8080", true, &accesstest.Keys{}, "access.AnonymousAuthenticator"},
		"AutoKeysAnywhere": {"auto", "0.0.0.0:8080", false, withKey, "*sigv4.Verifier"},
		"UnknownMode":      {"basic", "127.0.0.1:8080", false, withKey, `--auth "basic"`},
		"AutoNoKeysBeyond": {"auto", "10.0.0.1:8080", false, &accesstest.Keys{}, "refusing to serve 10.0.0.1:8080 without authentication: no access key exists yet"},
		"AutoInsecureOpen": {"auto", "10.0.0.1:8080", true, &accesstest.Keys{}, "*main.firstKeyGate"},
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
				defer g.close()
				got = fmt.Sprintf("%T", g.authn)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if (got == "access.AnonymousAuthenticator" || got == "*main.firstKeyGate") && !strings.Contains(logs.String(), "authentication is off") {
				t.Errorf("an open server did not say so: %s", logs.String())
			}
		})
	}
}

// Ensure, on a real SQLite store, that --auth auto with no key serves
// unsigned callers until a key is made beside it, then refuses them
// within a second (logging why) and takes signed ones; and that deleting
// the key does not open the server again.
func TestAutoSignsFromTheFirstKey(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs syncBuffer
	cfg := serveConfig{listen: "127.0.0.1:0", dataDir: dir, region: "us-east-1", accountID: "000000000000", auth: authConfig{mode: "auto"}}
	g, err := openGate(t.Context(), cfg, st.Keys(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	unsigned := func() error {
		r := httptest.NewRequest("POST", "/v1/listservicejobs", strings.NewReader("{}"))
		id, err := g.authn.Authenticate(r)
		if err != nil {
			return err
		}
		return g.authz.Authorize(r.Context(), id, "batch:ListServiceJobs", "*")
	}
	if err := unsigned(); err != nil {
		t.Fatalf("an unsigned request before any key: %v", err)
	}

	// The key is made as sharq admin keys makes it: through its own
	// keyring over the same database.
	key, err := loadServerKey(cfg.auth.serverKeyPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := access.NewKeyring(st.Keys(), key, cfg.accountID)
	if err != nil {
		t.Fatal(err)
	}
	k, err := admin.Create(t.Context(), "admin", []string{"AdministratorAccess"})
	if err != nil {
		t.Fatal(err)
	}
	refused := func() bool {
		var ae *access.AuthError
		return errors.As(unsigned(), &ae) && ae.Code == "MissingAuthenticationTokenException"
	}
	testwait.Until(t, 10*time.Second, func() error {
		if refused() {
			return nil
		}
		return fmt.Errorf("unsigned requests still served after the first key was made: %v", unsigned())
	})
	if want := "access key " + k.ID + " exists: requests must now be signed"; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
	r := httptest.NewRequest("POST", "http://127.0.0.1/v1/listservicejobs", strings.NewReader("{}"))
	sum := sha256.Sum256([]byte("{}"))
	err = v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: k.ID, SecretAccessKey: k.Secret}, r,
		hex.EncodeToString(sum[:]), "batch", "us-east-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if id, err := g.authn.Authenticate(r); err != nil || id.AccessKeyID != k.ID {
		t.Errorf("a request signed with the new key: %+v, %v", id, err)
	}

	if err := st.Keys().DeleteKey(t.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * firstKeyWatch) // the real gate's watch of the real store: four of its rounds, in which it must not open again
	if !refused() {
		t.Errorf("an unsigned request once the last key was deleted: %v, want MissingAuthenticationTokenException", unsigned())
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
