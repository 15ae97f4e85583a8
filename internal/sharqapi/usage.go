package sharqapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/usage"
)

// UsagePath is the usage history's route.
const UsagePath = "/sharq/v1/usage"

// DefaultUsageSince is the period a usage report covers when it names none.
const DefaultUsageSince = 30 * 24 * time.Hour

// UsageReport is GET /sharq/v1/usage: the capacity used over [from, to),
// in buckets of every (one bucket when 0), grouped by share, share-id,
// owner or queue. Times are epoch milliseconds.
type UsageReport struct {
	From  int64      `json:"from"`
	To    int64      `json:"to"`
	Every int64      `json:"every"`
	By    string     `json:"by"`
	Rows  []UsageRow `json:"rows"`
}

// UsageRow is one group's use of one kind of capacity in one bucket. Kind
// is own, borrowed (from peer), lent (to peer), or preempted: the part of
// own and borrowed held by attempts that were later preempted. Queue is
// set for shares and share identifiers; key is the share, share
// identifier, owner or queue, "" for none.
type UsageRow struct {
	From            int64   `json:"from"`
	To              int64   `json:"to"`
	Queue           string  `json:"queue,omitempty"`
	Key             string  `json:"key"`
	Kind            string  `json:"kind"`
	Peer            string  `json:"peer,omitempty"`
	InstanceSeconds float64 `json:"instanceSeconds"`
	GPUSeconds      float64 `json:"gpuSeconds"`
}

// usageHistory serves ?by=share|share-id|owner|queue, the period as
// ?since=30d (up to now) or ?from=&to= (epoch ms), and ?every=1d.
func (h *Handler) usageHistory(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionGetUsage, access.AnyResource) {
		return
	}
	q, err := usageQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	q, rows, err := h.eng.Usage(r.Context(), q)
	if err != nil {
		h.engineError(w, err)
		return
	}
	out := UsageReport{From: q.From, To: q.To, Every: q.Every, By: q.By, Rows: make([]UsageRow, len(rows))}
	for i, row := range rows {
		out.Rows[i] = UsageRow{From: row.From, To: row.To, Queue: row.Queue, Key: row.Key, Kind: row.Kind, Peer: row.Peer,
			InstanceSeconds: float64(row.InstanceMillis) / 1000, GPUSeconds: float64(row.GPUMillis) / 1000}
	}
	writeJSON(w, out)
}

// usageQuery reads a report's query: a period of ?from=&to= or, without
// them, ?since= up to the engine's now.
func usageQuery(r *http.Request) (usage.Query, error) {
	v := r.URL.Query()
	q := usage.Query{By: v.Get("by"), Since: DefaultUsageSince.Milliseconds()}
	if q.By == "" {
		q.By = usage.ByShare
	}
	if s := v.Get("since"); s != "" {
		d, err := usage.ParseDuration(s)
		if err != nil {
			return q, err
		}
		if d <= 0 {
			return q, errors.New("since must be a positive duration")
		}
		q.Since = d.Milliseconds()
	}
	for name, dst := range map[string]*int64{"from": &q.From, "to": &q.To} {
		if s := v.Get(name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return q, &paramError{name, s}
			}
			*dst = n
			q.Since = 0
		}
	}
	if q.Since == 0 && (v.Get("from") == "" || v.Get("to") == "") {
		return q, errors.New("give both from and to, or since")
	}
	if s := v.Get("every"); s != "" {
		d, err := usage.ParseDuration(s)
		if err != nil {
			return q, err
		}
		q.Every = d.Milliseconds()
	}
	if q.Since > 0 {
		return q, nil // checked once the engine has resolved it
	}
	return q, q.Check()
}

type paramError struct{ name, value string }

func (e *paramError) Error() string {
	return e.name + " must be a time in epoch milliseconds, not " + strconv.Quote(e.value)
}
