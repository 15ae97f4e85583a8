package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/jobevents"
)

// hub fans the state out to the open streams. One goroutine (pushLoop)
// builds the state for all of them, so a hundred open pages cost what one
// does.
type hub struct {
	mu      sync.Mutex
	clients map[chan []byte]struct{}
	last    []byte // the state last pushed; nil makes the next build push
}

// join registers a stream. Each stream holds at most one state not yet
// written: a newer one replaces it, since only the latest matters.
func (c *Console) join() chan []byte {
	ch := make(chan []byte, 1)
	c.hub.mu.Lock()
	c.hub.clients[ch] = struct{}{}
	c.hub.last = nil // the newcomer needs a state even if nothing changed
	c.hub.mu.Unlock()
	c.poke()
	return ch
}

func (c *Console) leave(ch chan []byte) {
	c.hub.mu.Lock()
	delete(c.hub.clients, ch)
	c.hub.mu.Unlock()
}

// pushLoop builds and pushes the state after each committed cycle, at most
// once per Options.Interval, and only when it differs from the last push:
// the engine commits a housekeeping cycle every second even when idle.
func (c *Console) pushLoop() {
	for {
		select {
		case <-c.closing:
			return
		case <-c.dirty:
		}
		c.push()
		select {
		case <-c.closing:
			return
		case <-time.After(c.opts.Interval):
		}
	}
}

func (c *Console) push() {
	c.hub.mu.Lock()
	n := len(c.hub.clients)
	c.hub.mu.Unlock()
	if n == 0 {
		return
	}
	b, err := json.Marshal(c.build(context.Background()))
	if err != nil {
		c.log.Error("console: encode state", "err", err)
		return
	}
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	if bytes.Equal(b, c.hub.last) {
		return
	}
	c.hub.last = b
	for ch := range c.hub.clients {
		select {
		case <-ch: // drop the stale state this stream has not written yet
		default:
		}
		ch <- b
	}
}

// recentOnConnect is how many of the latest events a new stream starts
// with.
const recentOnConnect = 50

// stream serves server-sent events: "state" with a State whenever it
// changes, and "job" with each batchapi.Event, starting with the latest
// ones. A comment line every 15 s keeps proxies from closing an idle
// stream.
func (c *Console) stream(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, access.ActionGetConsoleState, access.AnyResource) {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	// Subscribe before reading the backlog so that no event falls in
	// between; what is in both is sent once.
	events, cancel := c.eng.Subscribe(256)
	defer cancel()
	states := c.join()
	defer c.leave(states)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sent := map[string]bool{}
	recent := c.eng.RecentEvents()
	for _, ev := range recent[max(0, len(recent)-recentOnConnect):] {
		sent[ev.ID] = true
		writeEvent(w, "job", batchapi.EventOf(ev, c.base))
	}
	flusher.Flush()
	c.relay(r.Context(), w, flusher, states, events, sent)
}

func (c *Console) relay(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, states <-chan []byte, events <-chan jobevents.Event, sent map[string]bool) {
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.closing:
			return
		case b := <-states:
			fmt.Fprintf(w, "event: state\ndata: %s\n\n", b)
		case ev, ok := <-events:
			if !ok {
				return
			}
			if sent[ev.ID] {
				delete(sent, ev.ID)
				continue
			}
			writeEvent(w, "job", batchapi.EventOf(ev, c.base))
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		flusher.Flush()
	}
}

// writeEvent writes one server-sent event; JSON has no raw newlines, so
// the data fits on one line.
func writeEvent(w http.ResponseWriter, name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
}
