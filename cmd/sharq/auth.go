package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/engine"
)

// authConfig is how sharq serve authenticates and authorizes.
type authConfig struct {
	// mode is auto (sigv4 once an access key has been made, else none
	// until one is), none or sigv4.
	mode         string
	serverKey    string // file of the key that seals secrets; default <data-dir>/server.key
	insecureOpen bool   // serve without authentication on a non-loopback address
	anonRead     bool   // under sigv4, let unsigned callers read
	// auditRetention is how long audit entries are kept (0: for ever).
	auditRetention time.Duration
}

func (c *authConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.mode, "auth", "auto", "auto (sigv4 once an access key has been made in the store, even if deleted since; before that, none until the first is made, then sigv4 for good), none (anyone may do anything) or sigv4 (requests signed with sharq's access keys, authorized by their policies)")
	fs.StringVar(&c.serverKey, "server-key", "", "file of the key that seals access keys' secrets (default <data-dir>/server.key, created if missing)")
	fs.BoolVar(&c.insecureOpen, "insecure-open", false, "serve without authentication on an address other than loopback (warns every minute)")
	fs.BoolVar(&c.anonRead, "anonymous-read", false, "with sigv4: unsigned callers may read (ReadOnlyAccess), e.g. the console")
	fs.DurationVar(&c.auditRetention, "audit-retention", 90*24*time.Hour, "how long audit log entries are kept (0: for ever)")
}

func (c *authConfig) serverKeyPath(dataDir string) string {
	if c.serverKey != "" {
		return c.serverKey
	}
	return filepath.Join(dataDir, "server.key")
}

// loadServerKey reads the server key at path, or creates one there (mode
// 0600) when there is no file.
func loadServerKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b = make([]byte, access.ServerKeySize)
		rand.Read(b)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("server key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("server key: %w", err)
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return nil, fmt.Errorf("server key: %w", err)
		}
		return b, f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	if len(b) != access.ServerKeySize {
		return nil, fmt.Errorf("server key %s: %d bytes, want %d", path, len(b), access.ServerKeySize)
	}
	return b, nil
}

// accessGate is the request path's two halves, and a hook that gives the
// authorizer the engine once it exists.
type accessGate struct {
	authn     access.Authenticator
	authz     access.Authorizer
	keyring   *access.Keyring // issues keys through sharq's routes
	setEngine func(*engine.Engine)
	// close ends the gate's goroutines (the watch for the first key, the
	// --insecure-open warnings) and waits for them.
	close func()
}

// openGate decides the mode (logging it) and builds the gate for it. keys
// is nil for a store that keeps no access keys: the server can then only
// be open. With --auth auto and no key yet, the gate is open until the
// first key appears in the store, and signed from then on.
func openGate(ctx context.Context, cfg serveConfig, keys access.KeyStore, log *slog.Logger) (accessGate, error) {
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	closeGate := func() { cancel(); running.Wait() }
	g, err := buildGate(ctx, cfg, keys, log, &running)
	if err != nil {
		closeGate()
		return accessGate{}, err
	}
	g.close = closeGate
	return g, nil
}

// buildGate is openGate's work; the goroutines it starts run in running
// until ctx ends.
func buildGate(ctx context.Context, cfg serveConfig, keys access.KeyStore, log *slog.Logger, running *sync.WaitGroup) (accessGate, error) {
	open := accessGate{authn: access.AnonymousAuthenticator{}, authz: access.AllowAll{}, setEngine: func(*engine.Engine) {}}
	stored := keys
	var ring *access.Keyring
	if keys != nil {
		serverKey, err := loadServerKey(cfg.auth.serverKeyPath(cfg.dataDir))
		if err != nil {
			return accessGate{}, err
		}
		// NB: every request reads its key and policies; a second's cache
		// keeps that off the database.
		keys = access.NewCachedKeys(keys, time.Second)
		if ring, err = access.NewKeyring(keys, serverKey, cfg.accountID); err != nil {
			return accessGate{}, err
		}
		open.keyring = ring
	}
	mode := cfg.auth.mode
	switch {
	case mode == "sigv4" && keys == nil:
		return accessGate{}, errors.New("--auth sigv4: this store keeps no access keys")
	case mode == "auto" && keys == nil:
		mode = "none"
	case mode == "auto":
		// A key made once keeps signing on, even after the last one is
		// deleted: only --auth none opens the server again.
		made, err := keys.KeysEverMade(ctx)
		if err != nil {
			return accessGate{}, err
		}
		if made {
			mode = "sigv4"
		}
	case mode == "none", mode == "sigv4":
	default:
		return accessGate{}, fmt.Errorf("--auth %q: want auto, none or sigv4", mode)
	}
	if mode == "none" {
		how := "--auth none"
		if keys == nil {
			how = "this store keeps no access keys"
		}
		if !isLoopback(cfg.listen) && !cfg.auth.insecureOpen {
			return accessGate{}, fmt.Errorf("refusing to serve %s without authentication (%s): "+
				"serve with --auth auto or sigv4 and an access key (sharq admin keys create), or pass --insecure-open", cfg.listen, how)
		}
		log.Warn("authentication is off: every caller may do anything (" + how + ")")
		if cfg.auth.insecureOpen {
			running.Go(func() {
				warnEvery(ctx, time.Minute, log, "serving without authentication on "+cfg.listen+" (--insecure-open)")
			})
		}
		return open, nil
	}
	signed := signedGate(cfg, keys, ring)
	if mode == "sigv4" {
		log.Info("authentication: SigV4 with sharq's access keys", "anonymous_read", cfg.auth.anonRead)
		if ks, err := keys.Keys(ctx); err == nil && len(ks) == 0 {
			log.Warn("no access key exists: every request is refused until one is made (sharq admin keys create), " +
				"or the server is restarted with --auth none")
		}
		return signed, nil
	}
	// auto, and no key yet.
	if !isLoopback(cfg.listen) && !cfg.auth.insecureOpen {
		return accessGate{}, fmt.Errorf("refusing to serve %s without authentication: no access key exists yet; "+
			"create one first (sharq admin keys create), serve with --auth sigv4 to refuse every request until one exists, "+
			"or pass --insecure-open to serve open until the first key is made", cfg.listen)
	}
	log.Warn("authentication is off until an access key exists: every caller may do anything " +
		"(create one with `sharq admin keys create` and signing is required from then on)")
	openCtx, signedNow := context.WithCancel(ctx)
	if cfg.auth.insecureOpen {
		running.Go(func() {
			warnEvery(openCtx, time.Minute, log, "serving without authentication on "+cfg.listen+" (--insecure-open) until an access key exists")
		})
	}
	g := &firstKeyGate{open: open, signed: signed}
	running.Go(func() { g.watch(ctx, stored, log, signedNow) })
	return accessGate{authn: g, authz: g, keyring: ring, setEngine: signed.setEngine}, nil
}

// signedGate checks every request's SigV4 signature with the keys of ring
// and authorizes it by its key's policies.
func signedGate(cfg serveConfig, keys access.KeyStore, ring *access.Keyring) accessGate {
	authz := &access.PolicyAuthorizer{Keys: keys, AnonymousRead: cfg.auth.anonRead}
	base := arn.NewBase(cfg.region, cfg.accountID)
	return accessGate{
		authn: sigv4.New(sigv4.Options{Credentials: ring, Region: cfg.region, Services: signingServices,
			GlobalServices: []string{"iam"}, AllowUnsigned: true}),
		authz:   authz,
		keyring: ring,
		setEngine: func(eng *engine.Engine) {
			authz.JobShare = func(ctx context.Context, jobARN string) (string, error) {
				j, err := eng.DescribeServiceJob(ctx, jobARN)
				if engine.ErrorCode(err) == engine.NotFound {
					return "", fmt.Errorf("%w: %w", access.ErrNotFound, err)
				}
				if err != nil {
					return "", err
				}
				if j.QuotaShareName != "" {
					return base.QuotaShareIn(j.JobQueue, j.QuotaShareName), nil
				}
				return base.Of(arn.JobQueue, j.JobQueue), nil
			}
		},
	}
}

// firstKeyWatch is how often an open server under --auth auto looks for
// the first access key.
var firstKeyWatch = 250 * time.Millisecond

// firstKeyGate is --auth auto on a store with no access key yet: open
// until a key appears in the store (made by sharq admin keys, another
// server or sharq's routes), then signed for good. Deleting the last key
// does not open it again while it runs.
type firstKeyGate struct {
	open, signed accessGate
	on           atomic.Bool
}

func (g *firstKeyGate) Authenticate(r *http.Request) (access.Identity, error) {
	if g.on.Load() {
		return g.signed.authn.Authenticate(r)
	}
	return g.open.authn.Authenticate(r)
}

// Authorize asks the signed gate once signing is on, even for a request
// authenticated just before: its anonymous caller is then refused.
func (g *firstKeyGate) Authorize(ctx context.Context, id access.Identity, action, resource string) error {
	if g.on.Load() {
		return g.signed.authz.Authorize(ctx, id, action, resource)
	}
	return g.open.authz.Authorize(ctx, id, action, resource)
}

// watch reads the store's keys every firstKeyWatch until one exists, then
// turns signing on and calls signedNow.
func (g *firstKeyGate) watch(ctx context.Context, keys access.KeyStore, log *slog.Logger, signedNow func()) {
	t := time.NewTicker(firstKeyWatch)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A key made and deleted between two looks counts too.
		made, err := keys.KeysEverMade(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				log.Warn("read access keys to see whether signing must be turned on", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		if made {
			g.on.Store(true)
			signedNow()
			if ks, err := keys.Keys(ctx); err == nil && len(ks) > 0 {
				log.Warn("access key "+ks[0].ID+" exists: requests must now be signed", "key", ks[0].Name)
			} else {
				log.Warn("an access key was made: requests must now be signed")
			}
			return
		}
	}
}

// isLoopback tells whether a listen address is on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func warnEvery(ctx context.Context, d time.Duration, log *slog.Logger, msg string) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		log.Warn(msg)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
