package access

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AuditEntry is one mutating call, allowed or denied: one JSON line of
// the audit log.
type AuditEntry struct {
	Seq         int64     `json:"seq,omitempty"` // the store's order, from 1
	Time        time.Time `json:"time"`
	Key         string    `json:"key"` // the access key's name, or "anonymous"
	AccessKeyID string    `json:"accessKeyId,omitempty"`
	Operation   string    `json:"operation"` // the action: batch:SubmitServiceJob
	Resource    string    `json:"resource"`
	// Result is OK, or the error code the caller got (AccessDeniedException,
	// ClientException, UnrecognizedClientException, ...).
	Result    string `json:"result"`
	RequestID string `json:"requestId"`
}

// AuditStore keeps the audit log.
type AuditStore interface {
	// AppendAudit adds entries (their Seq is assigned), durably.
	AppendAudit(ctx context.Context, entries []AuditEntry) error
	// Audit returns up to limit entries with Seq > after, oldest first.
	Audit(ctx context.Context, after int64, limit int) ([]AuditEntry, error)
	// PruneAudit deletes the entries older than before, and says how many.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
}

// IsMutation tells whether an action changes something: every action but
// those that describe, list, get or only try (DryRun) something.
func IsMutation(action string) bool {
	_, verb, _ := strings.Cut(action, ":")
	for _, p := range []string{"Describe", "List", "Get", "DryRun", "Read"} {
		if strings.HasPrefix(verb, p) {
			return false
		}
	}
	return true
}

// Auditor records every mutating call in the audit log. It is two halves
// of the request path: Authorizer wraps the authorizer, noting each
// mutating action asked and its answer, and Middleware (inside
// authentication) writes the notes down once the answer is sent, with its
// result and request ID. Entries are written in batches, off the request
// path, at most every FlushEvery.
type Auditor struct {
	store AuditStore
	log   *slog.Logger
	now   func() time.Time

	mu      sync.Mutex
	pending []AuditEntry
	kick    chan struct{}
	done    chan struct{}
}

// FlushEvery is how long an audit entry may wait to be written.
const FlushEvery = 100 * time.Millisecond

// NewAuditor returns an auditor writing to store; Run must run for
// entries to be written.
func NewAuditor(store AuditStore, log *slog.Logger) *Auditor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Auditor{store: store, log: log, now: time.Now, kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// Authorizer wraps next so that each mutating action it is asked is noted
// for the request's audit entry.
func (a *Auditor) Authorizer(next Authorizer) Authorizer {
	return AuthorizerFunc(func(ctx context.Context, id Identity, action, resource string) error {
		err := next.Authorize(ctx, id, action, resource)
		if n, ok := ctx.Value(notesKey{}).(*notes); ok && IsMutation(action) {
			n.add(AuditEntry{Operation: action, Resource: resource, Result: refusalCode(err)})
		}
		return err
	})
}

// refusalCode is the code of an authorizer's refusal, or "" when it
// allowed the action.
func refusalCode(err error) string {
	if err == nil {
		return ""
	}
	if ae, ok := errors.AsType[*AuthError](err); ok {
		return ae.Code
	}
	if _, ok := errors.AsType[*DeniedError](err); ok {
		return "AccessDeniedException"
	}
	return "ServerException"
}

type notesKey struct{}

// notes are the audit entries of one request.
type notes struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (n *notes) add(e AuditEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.entries = append(n.entries, e)
}

// Middleware serves next, then records the request's mutating actions
// with the result the caller got. A mutating request refused before any
// authorization (a bad signature) is recorded by Refused.
func (a *Auditor) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := &notes{}
		id := requestID()
		w.Header()["x-amzn-RequestId"] = []string{id}
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), notesKey{}, n)))
		if len(n.entries) == 0 {
			return
		}
		caller := Caller(r.Context())
		result := "OK"
		if rw.status/100 != 2 {
			result = firstNonEmpty(rw.Header().Get("X-Amzn-ErrorType"), "HTTP "+strconv.Itoa(rw.status))
		}
		if got := rw.Header()["x-amzn-RequestId"]; len(got) > 0 {
			id = got[0]
		}
		for _, e := range n.entries {
			e.Time, e.Key, e.AccessKeyID, e.RequestID = a.now().UTC(), keyName(caller), caller.AccessKeyID, id
			if e.Result == "" {
				e.Result = result
			}
			a.add(e)
		}
	})
}

// Refused records a mutating request (not a GET) that authentication
// refused, once w holds the answer: its operation is its method and path
// (and X-Amz-Target, which names the operation of a POST to /).
func (a *Auditor) Refused(w http.ResponseWriter, r *http.Request, err error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || readPath(r.URL.Path) || readTarget(r) {
		return
	}
	id := requestID()
	if got := w.Header()["x-amzn-RequestId"]; len(got) > 0 {
		id = got[0]
	}
	op := r.Method + " " + r.URL.Path
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		op += " " + target
	}
	a.add(AuditEntry{Time: a.now().UTC(), Key: "unauthenticated", Operation: op,
		Resource: AnyResource, Result: refusalCode(err), RequestID: id})
}

func (a *Auditor) add(e AuditEntry) {
	a.mu.Lock()
	a.pending = append(a.pending, e)
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// PruneEvery is how often Run deletes the entries older than the
// retention.
const PruneEvery = time.Hour

// Run writes pending entries until ctx ends, then writes what is left.
// With a retention above 0, it deletes older entries at start and every
// PruneEvery.
func (a *Auditor) Run(ctx context.Context, retention time.Duration) {
	defer close(a.done)
	prune := time.NewTicker(PruneEvery)
	defer prune.Stop()
	a.prune(ctx, retention)
	for {
		select {
		case <-ctx.Done():
			a.flush(context.WithoutCancel(ctx))
			return
		case <-prune.C:
			a.prune(ctx, retention)
			continue
		case <-a.kick:
		}
		a.flush(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(FlushEvery):
		}
	}
}

// Wait returns once Run has written its last entries.
func (a *Auditor) Wait() { <-a.done }

func (a *Auditor) prune(ctx context.Context, retention time.Duration) {
	if retention <= 0 {
		return
	}
	n, err := a.store.PruneAudit(ctx, a.now().Add(-retention))
	if err != nil {
		a.log.Warn("prune audit log", "err", err)
		return
	}
	if n > 0 {
		a.log.Info("pruned audit log", "entries", n)
	}
}

func (a *Auditor) flush(ctx context.Context) {
	a.mu.Lock()
	batch := a.pending
	// The next batch is likely as long: room for it now, not by doubling.
	a.pending = make([]AuditEntry, 0, len(batch))
	a.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := a.store.AppendAudit(ctx, batch); err != nil {
		a.log.Error("write audit log; entries lost", "entries", len(batch), "err", err)
	}
}

// readPath tells whether a POST to path only reads: an AWS Batch
// Describe, List or Get, or sharq's positions and dry run.
func readPath(path string) bool {
	if op, ok := strings.CutPrefix(path, "/v1/"); ok {
		return strings.HasPrefix(op, "describe") || strings.HasPrefix(op, "list") || strings.HasPrefix(op, "get")
	}
	return path == "/sharq/v1/jobs/positions" || path == "/sharq/v1/dryrun"
}

// readTarget tells whether r's X-Amz-Target names an operation that
// changes nothing (SageMaker.DescribeTrainingJob).
func readTarget(r *http.Request) bool {
	_, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	return ok && !IsMutation(":"+op)
}

// keyName is the name of the caller's key: the user name of its
// principal.
func keyName(id Identity) string {
	if id.Anonymous || id.Principal == "" {
		return "anonymous"
	}
	if _, name, ok := strings.Cut(id.Principal, ":user/"); ok {
		return name
	}
	return id.Principal
}

func requestID() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
