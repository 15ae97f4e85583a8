package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
)

// Ensure a follower whose lease names its own address (a new server on
// the port of a leader that has just gone) answers 503 rather than
// forwarding the request to itself in a loop.
func TestFollowerDoesNotForwardInALoop(t *testing.T) {
	srv, conn := startFollower(t)
	own := strings.TrimPrefix(srv.URL, "http://")
	if _, err := conn.Exec(t.Context(), `UPDATE leader SET term = 1, holder = 'gone', address = $1, expires_at = now() + interval '1 minute'`, own); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(srv.URL+"/v1/listservicejobs", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "ServiceUnavailableException") {
		t.Errorf("a request to a follower that the lease names: %d %s, want 503 ServiceUnavailableException", resp.StatusCode, body)
	}
	// A fresh lease (never taken) names no one: 503 as well.
	if _, err := conn.Exec(t.Context(), `UPDATE leader SET holder = '', address = '', expires_at = '-infinity'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // past the follower's cache of the lease
	resp, err = c.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Sharq-Role") != "follower" {
		t.Errorf("/readyz of a follower: %d %s", resp.StatusCode, resp.Header.Get("Sharq-Role"))
	}
}

// A follower that found no leader forwards to one as soon as one holds the
// lease: it does not answer from what it read before.
func TestFollowerFindsANewLeaderAtOnce(t *testing.T) {
	srv, conn := startFollower(t)
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the leader") }))
	defer leader.Close()
	c := &http.Client{Timeout: 10 * time.Second}
	post := func() (int, string) {
		t.Helper()
		resp, err := c.Post(srv.URL+"/v1/listservicejobs", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("with no leader: %d %s, want 503", code, body)
	}
	if _, err := conn.Exec(t.Context(), `UPDATE leader SET term = 1, holder = 'new', address = $1, expires_at = now() + interval '1 minute'`,
		strings.TrimPrefix(leader.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	if code, body := post(); code != http.StatusOK || body != "the leader" {
		t.Errorf("right after a leader took the lease: %d %s, want the leader's answer", code, body)
	}
}

// startFollower starts a follower on a fresh store, and returns it and a
// connection to the store, to write the lease with.
func startFollower(t *testing.T) (*httptest.Server, *pgx.Conn) {
	t.Helper()
	url := pgtest.URL(t)
	st, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(newFollower(st, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return srv, conn
}
