package sharqapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/engine"
)

// DryRunPath is the server route that answers what a submission would do
// now. It takes SubmitServiceJob's JSON body and returns an engine.DryRun;
// a submission the API would refuse gets the same ClientException.
const DryRunPath = "/sharq/v1/dryrun"

// SubmitRequest is SubmitServiceJob's body, as the AWS API takes it.
type SubmitRequest struct {
	JobName                 string                             `json:"jobName"`
	JobQueue                string                             `json:"jobQueue"`
	ServiceJobType          string                             `json:"serviceJobType"`
	ServiceRequestPayload   string                             `json:"serviceRequestPayload"`
	QuotaShareName          string                             `json:"quotaShareName,omitempty"`
	ShareIdentifier         string                             `json:"shareIdentifier,omitempty"`
	SchedulingPriority      *int                               `json:"schedulingPriority,omitempty"`
	PreemptionConfiguration *engine.JobPreemptionConfiguration `json:"preemptionConfiguration,omitempty"`
	RetryStrategy           *engine.RetryStrategy              `json:"retryStrategy,omitempty"`
	TimeoutConfig           *engine.TimeoutConfig              `json:"timeoutConfig,omitempty"`
	Tags                    map[string]string                  `json:"tags,omitempty"`
	ClientToken             string                             `json:"clientToken,omitempty"`
}

// Input is the engine operation's input for the request.
func (r SubmitRequest) Input() engine.SubmitServiceJobInput {
	return engine.SubmitServiceJobInput{
		JobName: r.JobName, JobQueue: r.JobQueue, ServiceJobType: r.ServiceJobType, ServiceRequestPayload: r.ServiceRequestPayload,
		QuotaShareName: r.QuotaShareName, ShareIdentifier: r.ShareIdentifier, SchedulingPriority: r.SchedulingPriority,
		PreemptionConfiguration: r.PreemptionConfiguration, RetryStrategy: r.RetryStrategy, TimeoutConfig: r.TimeoutConfig,
		Tags: r.Tags, ClientToken: r.ClientToken,
	}
}

// dryRunError is the body of a refused dry-run, in the AWS error shape.
type dryRunError struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

// dryRun answers what submitting the body, a SubmitServiceJob request,
// would do now: an engine.DryRun, or the ClientException the submission
// would get. It changes nothing.
func (h *Handler) dryRun(w http.ResponseWriter, r *http.Request) {
	var req SubmitRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeStatusJSON(w, http.StatusBadRequest, dryRunError{"ClientException", "body is not a SubmitServiceJob request: " + err.Error()})
		return
	}
	if req.JobQueue == "" || req.ServiceRequestPayload == "" {
		writeStatusJSON(w, http.StatusBadRequest, dryRunError{"ClientException", "jobQueue and serviceRequestPayload are required"})
		return
	}
	resource := h.base.Of(arn.JobQueue, req.JobQueue)
	if req.QuotaShareName != "" {
		resource = h.base.QuotaShareIn(req.JobQueue, req.QuotaShareName)
	}
	err := h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.ActionDryRunSubmitServiceJob, resource)
	if de, ok := errors.AsType[*access.DeniedError](err); ok {
		writeStatusJSON(w, http.StatusForbidden, dryRunError{"AccessDeniedException", de.Error()})
		return
	}
	if err != nil {
		h.opts.Logger.Error("dry-run", "err", err)
		writeStatusJSON(w, http.StatusInternalServerError, dryRunError{"ServerException", "internal error"})
		return
	}
	out, err := h.eng.DryRunSubmit(r.Context(), req.Input())
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
	writeStatusJSON(w, http.StatusOK, out)
}

func writeStatusJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// ErrDryRunRefused wraps a ClientException: the server would refuse the
// submission itself.
var ErrDryRunRefused = errors.New("submission refused")

// DryRun asks the server at endpoint (e.g. http://127.0.0.1:8080) what
// submitting req would do now. hc nil means http.DefaultClient.
func DryRun(ctx context.Context, hc *http.Client, endpoint string, req SubmitRequest) (engine.DryRun, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	body, err := json.Marshal(req)
	if err != nil {
		return engine.DryRun{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+DryRunPath, bytes.NewReader(body))
	if err != nil {
		return engine.DryRun{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hr)
	if err != nil {
		return engine.DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return engine.DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e dryRunError
		if json.Unmarshal(data, &e) == nil && e.Type == "ClientException" {
			return engine.DryRun{}, fmt.Errorf("%w: %s", ErrDryRunRefused, e.Message)
		}
		if e.Type != "" && e.Message != "" {
			return engine.DryRun{}, fmt.Errorf("dry-run: %s: %s", e.Type, e.Message)
		}
		return engine.DryRun{}, fmt.Errorf("dry-run: %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var out engine.DryRun
	if err := json.Unmarshal(data, &out); err != nil {
		return engine.DryRun{}, fmt.Errorf("dry-run: %w", err)
	}
	return out, nil
}
