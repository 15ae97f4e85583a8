package sharqapi

import (
	"encoding/json"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/readmodel"
)

// eventFilter selects events by job, queue and share; empty fields match all.
type eventFilter struct {
	job, queue, share string
}

func (f eventFilter) match(ev jobevents.Event) bool {
	d := ev.Job
	return (f.job == "" || d.JobID == f.job || d.JobArn == f.job) &&
		(f.queue == "" || readmodel.QueueName(d.JobQueue) == f.queue || d.JobQueue == f.queue) &&
		(f.share == "" || d.QuotaShareName == f.share)
}

// events streams state-change events as JSON lines: first those the server
// still has (a job's whole history with ?job=, else the latest 1,000), then,
// with ?follow=true, each new one as it is committed, until the client
// leaves or the server shuts down.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := eventFilter{job: q.Get("job"), queue: q.Get("queue"), share: q.Get("share")}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	if !h.authorize(w, r, access.ActionGetEvents, h.eventsResource(f)) {
		return
	}
	var live <-chan jobevents.Event
	if follow {
		// Subscribe before reading the backlog so nothing falls in between;
		// what is in both is sent once.
		ch, cancel := h.eng.Subscribe(1024)
		defer cancel()
		live = ch
	}
	backlog, err := h.backlog(f)
	if err != nil {
		h.engineError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	sent := map[string]bool{}
	for _, ev := range backlog {
		if f.match(ev) {
			sent[ev.ID] = true
			enc.Encode(batchapi.EventOf(ev, h.base))
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	if !follow {
		return
	}
	h.stream(r, enc, flusher, live, f, sent)
}

// eventsResource is what a filter reads: one job, one share, one queue or
// every event.
func (h *Handler) eventsResource(f eventFilter) string {
	switch {
	case f.job != "":
		return h.base.Of(arn.ServiceJob, f.job)
	case f.queue != "" && f.share != "":
		return h.base.QuotaShareIn(f.queue, f.share)
	case f.queue != "":
		return h.base.Of(arn.JobQueue, f.queue)
	}
	return access.AnyResource
}

func (h *Handler) backlog(f eventFilter) ([]jobevents.Event, error) {
	if f.job != "" {
		return h.eng.JobEvents(f.job)
	}
	return h.eng.RecentEvents(), nil
}

func (h *Handler) stream(r *http.Request, enc *json.Encoder, flusher http.Flusher, live <-chan jobevents.Event, f eventFilter, sent map[string]bool) {
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.closing:
			return
		case ev, ok := <-live:
			if !ok {
				return
			}
			if !f.match(ev) || sent[ev.ID] {
				continue
			}
			if err := enc.Encode(batchapi.EventOf(ev, h.base)); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}
