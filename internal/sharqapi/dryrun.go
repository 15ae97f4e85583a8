package sharqapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
)

// DryRunPath is the server route that answers what a submission would do
// now. It takes SubmitServiceJob's JSON body and returns a DryRun;
// a submission the API would refuse gets the same ClientException.
const DryRunPath = "/sharq/v1/dryrun"

// DryRun is what would happen if a job were submitted now.
type DryRun struct {
	Queue string `json:"queue"`
	Share string `json:"quotaShareName,omitempty"`
	// Dispatched: the job would be SCHEDULED at once, on Own capacity of
	// its share and Borrowed capacity of others; Via is idle, reclaim
	// (cross-share preemption) or in-share.
	Dispatched bool                     `json:"dispatched"`
	Own        []batchapi.CapacityUsage `json:"own,omitempty"`
	Borrowed   []batchapi.CapacityUsage `json:"borrowed,omitempty"`
	Via        string                   `json:"via,omitempty"`
	// Preempts are the jobs it would stop.
	Preempts []DryRunVictim `json:"preempts,omitempty"`
	// Otherwise it would wait: Reason is its statusReason; Position its
	// 1-based place among its share's RUNNABLE jobs.
	Reason           string `json:"reason,omitempty"`
	Misconfiguration bool   `json:"misconfiguration,omitempty"`
	Position         int    `json:"position,omitempty"`
}

// DryRunVictim is a job a dry-run's job would preempt.
type DryRunVictim struct {
	JobID    string `json:"jobId"`
	JobName  string `json:"jobName"`
	Share    string `json:"quotaShareName,omitempty"`
	Priority int    `json:"schedulingPriority"`
	Kind     string `json:"kind"` // cross-share or in-share
	// Requeued is false when the preemption would fail the job (its
	// preemption retries exhausted).
	Requeued bool `json:"requeued"`
}

func dryRunOf(d engine.DryRun) DryRun {
	usage := func(us []core.UnitCount) []batchapi.CapacityUsage {
		if len(us) == 0 {
			return nil
		}
		out := make([]batchapi.CapacityUsage, len(us))
		for i, u := range us {
			out[i] = batchapi.CapacityUsage{CapacityUnit: u.Unit, Quantity: float64(u.Count)}
		}
		return out
	}
	out := DryRun{
		Queue: d.Queue, Share: d.Share, Dispatched: d.Dispatched, Own: usage(d.Own), Borrowed: usage(d.Borrowed), Via: d.Via,
		Reason: d.Reason, Misconfiguration: d.Misconfiguration, Position: d.Position,
	}
	for _, v := range d.Preempts {
		out.Preempts = append(out.Preempts, DryRunVictim(v))
	}
	return out
}

// dryRunError is the body of a refused dry-run, in the AWS error shape.
type dryRunError struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

// dryRun answers what submitting the body, a SubmitServiceJob request,
// would do now: a DryRun, or the ClientException the submission
// would get. It changes nothing.
func (h *Handler) dryRun(w http.ResponseWriter, r *http.Request) {
	var req batchapi.SubmitServiceJobRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeStatusJSON(w, http.StatusBadRequest, dryRunError{"ClientException", "body is not a SubmitServiceJob request: " + err.Error()})
		return
	}
	input, err := req.Input()
	if err != nil {
		writeStatusJSON(w, http.StatusBadRequest, dryRunError{"ClientException", engine.ErrorMessage(err)})
		return
	}
	resource := h.base.Of(arn.JobQueue, req.JobQueue)
	if req.QuotaShareName != "" {
		resource = h.base.QuotaShareIn(req.JobQueue, req.QuotaShareName)
	}
	err = h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.ActionDryRunSubmitServiceJob, resource)
	if de, ok := errors.AsType[*access.DeniedError](err); ok {
		writeStatusJSON(w, http.StatusForbidden, dryRunError{"AccessDeniedException", de.Error()})
		return
	}
	if err != nil {
		h.opts.Logger.Error("dry-run", "err", err)
		writeStatusJSON(w, http.StatusInternalServerError, dryRunError{"ServerException", "internal error"})
		return
	}
	out, err := h.eng.DryRunSubmit(r.Context(), input)
	switch {
	case err == nil:
	case engine.ErrorCode(err) != engine.Internal:
		writeStatusJSON(w, http.StatusBadRequest, dryRunError{"ClientException", engine.ErrorMessage(err)})
		return
	default:
		h.opts.Logger.Error("dry-run", "err", err)
		writeStatusJSON(w, http.StatusInternalServerError, dryRunError{"ServerException", "internal error"})
		return
	}
	writeStatusJSON(w, http.StatusOK, dryRunOf(out))
}

func writeStatusJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// ErrDryRunRefused wraps a ClientException: the server would refuse the
// submission itself.
var ErrDryRunRefused = errors.New("submission refused")

// RequestDryRun asks the server at endpoint (e.g. http://127.0.0.1:8080) what
// submitting req would do now. hc nil means http.DefaultClient.
func RequestDryRun(ctx context.Context, hc *http.Client, endpoint string, req batchapi.SubmitServiceJobRequest) (DryRun, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	body, err := json.Marshal(req)
	if err != nil {
		return DryRun{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+DryRunPath, bytes.NewReader(body))
	if err != nil {
		return DryRun{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hr)
	if err != nil {
		return DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e dryRunError
		if json.Unmarshal(data, &e) == nil && e.Type == "ClientException" {
			return DryRun{}, fmt.Errorf("%w: %s", ErrDryRunRefused, e.Message)
		}
		if e.Type != "" && e.Message != "" {
			return DryRun{}, fmt.Errorf("dry-run: %s: %s", e.Type, e.Message)
		}
		return DryRun{}, fmt.Errorf("dry-run: %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var out DryRun
	if err := json.Unmarshal(data, &out); err != nil {
		return DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	return out, nil
}

// String renders a dry-run in a sentence or two, for the CLI.
func (d DryRun) String() string {
	var b strings.Builder
	if !d.Dispatched {
		b.WriteString("would wait")
		if d.Position > 0 {
			b.WriteString(" at position " + strconv.Itoa(d.Position) + " of " + d.Share)
		}
		if d.Reason != "" {
			b.WriteString(": " + d.Reason)
		}
		return b.String()
	}
	b.WriteString("would be dispatched now")
	if len(d.Own) > 0 {
		b.WriteString(" on own capacity " + unitsText(d.Own))
	}
	if len(d.Borrowed) > 0 {
		if len(d.Own) > 0 {
			b.WriteString(" and")
		}
		b.WriteString(" borrowing " + unitsText(d.Borrowed))
	}
	for i, v := range d.Preempts {
		if i == 0 {
			b.WriteString(", preempting")
		} else {
			b.WriteString(",")
		}
		b.WriteString(" " + v.JobID + " (" + v.Kind)
		if v.Share != "" {
			b.WriteString(" from " + v.Share)
		}
		b.WriteString(")")
	}
	return b.String()
}

func unitsText(us []batchapi.CapacityUsage) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = strconv.Itoa(int(u.Quantity)) + " × " + u.CapacityUnit
	}
	return strings.Join(parts, ", ")
}
