package usage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Groupings of a report.
const (
	ByShare   = "share"
	ByShareID = "share-id"
	ByOwner   = "owner"
	ByQueue   = "queue"
)

// MaxBuckets bounds a report's time buckets.
const MaxBuckets = 10000

// Query asks for usage over [From, To) (epoch ms), in buckets of Every ms
// (one bucket when 0), grouped By. Since, when above 0, sets the period
// instead: the last Since ms up to now (Resolve).
type Query struct {
	From, To, Every int64
	Since           int64
	By              string
}

// Resolve sets a period given by Since from now (epoch ms).
func (q Query) Resolve(now int64) Query {
	if q.Since > 0 {
		q.From, q.To, q.Since = now-q.Since, now, 0
	}
	return q
}

// Check tells what is wrong with q, if anything.
func (q Query) Check() error {
	switch q.By {
	case ByShare, ByShareID, ByOwner, ByQueue:
	default:
		return fmt.Errorf("by must be share, share-id, owner or queue, not %q", q.By)
	}
	if q.To <= q.From {
		return fmt.Errorf("the period is empty: it must end after it begins")
	}
	if q.Every < 0 {
		return fmt.Errorf("every must not be negative")
	}
	if q.Every > 0 && (q.To-q.From+q.Every-1)/q.Every > MaxBuckets {
		return fmt.Errorf("%d buckets at most: choose a longer every or a shorter period", MaxBuckets)
	}
	return nil
}

// Row is one group's usage of one kind in one bucket.
type Row struct {
	From, To int64 // the bucket, epoch ms
	// Queue is the job queue of a share or share identifier; Key is the
	// share, share identifier, owner or queue the row is about ("" for
	// none: a FIFO queue's jobs, unsigned jobs).
	Queue, Key string
	Kind       string // Own, Borrowed, Lent or Preempted
	// Peer is the lender of Borrowed capacity and the borrower of Lent
	// capacity ("" for the capacity beyond all share limits).
	Peer string
	Amount
}

type rowKey struct {
	bucket                 int64
	queue, key, kind, peer string
}

// Report sums segments into rows.
type Report struct {
	q    Query
	now  int64
	rows map[rowKey]*Amount // by pointer: one lookup per segment
	// The row put last: segments in a row often share it, and comparing
	// costs less than hashing.
	lastKey rowKey
	last    *Amount
}

// NewReport begins a report of q; open segments count up to now (epoch
// ms).
func NewReport(q Query, now int64) *Report {
	return &Report{q: q, now: now, rows: map[rowKey]*Amount{}}
}

// Add counts the part of s within the report's period.
func (r *Report) Add(s Segment) {
	stop := s.Stop
	if stop == 0 {
		stop = r.now
	}
	lo, hi := max(s.Start, r.q.From), min(stop, r.q.To)
	if lo >= hi {
		return
	}
	queue, key := "", ""
	switch r.q.By {
	case ByShare:
		queue, key = s.Queue, s.Share
	case ByShareID:
		queue, key = s.Queue, s.ShareID
	case ByOwner:
		key = s.Owner
	case ByQueue:
		key = s.Queue
	}
	every := r.q.Every
	if every <= 0 {
		every = r.q.To - r.q.From
	}
	for b := (lo - r.q.From) / every; ; b++ {
		bs := r.q.From + b*every
		if bs >= hi {
			break
		}
		d := min(hi, bs+every) - max(lo, bs)
		if d <= 0 {
			continue
		}
		r.put(rowKey{b, queue, key, s.Kind, s.Peer}, d, &s)
		if s.Preempted {
			r.put(rowKey{b, queue, key, Preempted, ""}, d, &s)
		}
		if r.q.By == ByShare && s.Kind == Borrowed && s.Peer != "" {
			r.put(rowKey{b, queue, s.Peer, Lent, s.Share}, d, &s)
		}
	}
}

func (r *Report) put(k rowKey, d int64, s *Segment) {
	a := r.last
	if a == nil || k != r.lastKey {
		a = r.rows[k]
		if a == nil {
			a = &Amount{}
			r.rows[k] = a
		}
		r.lastKey, r.last = k, a
	}
	a.InstanceMillis += d * int64(s.Instances)
	a.GPUMillis += d * int64(s.GPUs)
}

// Rows returns the rows by bucket, queue, key, kind (own, borrowed, lent,
// preempted) and peer.
func (r *Report) Rows() []Row {
	every := r.q.Every
	if every <= 0 {
		every = r.q.To - r.q.From
	}
	out := make([]Row, 0, len(r.rows))
	for k, a := range r.rows {
		from := r.q.From + k.bucket*every
		out = append(out, Row{From: from, To: min(from+every, r.q.To), Queue: k.queue, Key: k.key, Kind: k.kind, Peer: k.peer, Amount: *a})
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Key, b.Key),
			kindOrder(a.Kind)-kindOrder(b.Kind), cmp.Compare(a.Peer, b.Peer))
	})
	return out
}

// ParseDuration reads a duration as time.ParseDuration does, and also in
// whole days ("30d") and weeks ("2w"), as reports and retention are said.
func ParseDuration(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v < 0 || v > int64(math.MaxInt64/unit) {
				return 0, fmt.Errorf("invalid duration %q: want a whole number of days (30d) or weeks (2w), or a Go duration (12h, 90m)", s)
			}
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a whole number of days (30d) or weeks (2w), or a Go duration (12h, 90m)", s)
	}
	return d, nil
}
