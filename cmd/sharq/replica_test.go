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
	url := pgtest.URL(t)
	st, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(newFollower(st, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
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
