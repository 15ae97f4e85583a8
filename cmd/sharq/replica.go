package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// openStore opens the store cfg.store names: a postgres:// URL, shared by
// several servers of which one leads, or else the SQLite file in the data
// directory, this server's alone. shared is nil for SQLite.
func openStore(ctx context.Context, cfg serveConfig, log *slog.Logger) (st store.Store, shared *postgres.Store, err error) {
	if isPostgresURL(cfg.store) {
		pg, err := postgres.Open(ctx, cfg.store, postgres.WithLogger(log))
		if err != nil {
			return nil, nil, err
		}
		return pg, pg, nil
	}
	if cfg.store != "" {
		return nil, nil, fmt.Errorf("--store %q: want a postgres:// URL (or nothing, for the SQLite file in --data-dir)", cfg.store)
	}
	s, err := sqlite.Open(filepath.Join(cfg.dataDir, "sharq.db"))
	return s, nil, err
}

func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// holderName names this server process in the lease: its host, its
// process and a random part, so a restarted server is a new holder.
func holderName() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// frontDoor serves whatever handler is current: a follower's while the
// server waits for the lease, the leader's API once it leads.
type frontDoor struct{ h atomic.Pointer[http.Handler] }

func (f *frontDoor) set(h http.Handler) { f.h.Store(&h) }

func (f *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*f.h.Load()).ServeHTTP(w, r) }

// follower serves a server that does not lead: /healthz answers, /readyz
// says it is a follower (503), and every other request goes to the leader
// as it came (the Host header too, which a SigV4 signature covers). With
// no leader to reach it answers 503 ServiceUnavailableException, which the
// AWS SDKs retry.
type follower struct {
	st  *postgres.Store
	log *slog.Logger

	mu      sync.Mutex
	leader  postgres.LeaderInfo
	readAt  time.Time
	proxies map[string]*httputil.ReverseProxy
	// transport keeps as many connections to the leader open as requests
	// are in flight: net/http's default keeps 2, and opens a new one for
	// every other request under load.
	transport *http.Transport
}

func newFollower(st *postgres.Store, log *slog.Logger) *follower {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
	return &follower{st: st, log: log, proxies: map[string]*httputil.ReverseProxy{}, transport: t}
}

func (f *follower) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	li, err := f.currentLeader(r.Context())
	switch r.URL.Path {
	case "/healthz":
		w.Header().Set("Sharq-Role", "follower")
		io.WriteString(w, "ok\n")
		return
	case "/readyz":
		w.Header().Set("Sharq-Role", "follower")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "follower: the leader is %s (term %d)\n", orNone(li.Address), li.Term)
		return
	}
	if r.Header.Get(forwardedHeader) != "" {
		// The lease names this server, or one that forwards back: a
		// leader that has just gone, whose address this server now has.
		unavailable(w, "no leader is serving at the moment; retry")
		return
	}
	if err != nil || li.Address == "" || !li.Expires.After(time.Now()) {
		if err != nil {
			f.log.Warn("follower: read the lease", "err", err)
		}
		unavailable(w, "no leader is serving at the moment; retry")
		return
	}
	f.proxy(li.Address).ServeHTTP(w, r)
}

// currentLeader reads the lease at most every 500 ms while it names a live
// leader. While it names none, every request reads it again, so that a
// leader is found as soon as it holds the lease, not up to 500 ms later;
// requests that waited for a read begun after they came share its result.
func (f *follower) currentLeader(ctx context.Context) (postgres.LeaderInfo, error) {
	asked := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	live := f.leader.Address != "" && f.leader.Expires.After(asked)
	if (live && asked.Sub(f.readAt) < 500*time.Millisecond) || f.readAt.After(asked) {
		return f.leader, nil
	}
	began := time.Now()
	li, err := f.st.Leader(ctx)
	if err != nil {
		return postgres.LeaderInfo{}, err
	}
	f.leader, f.readAt = li, began
	return li, nil
}

func (f *follower) proxy(address string) *httputil.ReverseProxy {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.proxies[address]; p != nil {
		return p
	}
	target := &url.URL{Scheme: "http", Host: address}
	if u, err := url.Parse(address); err == nil && u.Scheme != "" && u.Host != "" {
		target = u
	}
	p := &httputil.ReverseProxy{
		Transport: f.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(forwardedHeader, "1")
		},
		FlushInterval: -1, // event streams go through as they are written
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			f.log.Warn("follower: forward to the leader", "leader", address, "err", err)
			f.mu.Lock()
			f.readAt = time.Time{} // read the lease again: the leader may have changed
			f.mu.Unlock()
			unavailable(w, "the leader did not answer; retry")
		},
	}
	f.proxies[address] = p
	return p
}

// forwardedHeader marks a request a follower forwarded: another follower
// does not forward it again, so no request goes round in a loop.
const forwardedHeader = "Sharq-Forwarded"

func unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, `{"__type":"ServiceUnavailableException","message":%q}`+"\n", msg)
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
