package web

import (
	"encoding/json"
	"mime"
	"net/http"
	"path"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// JobDetail is what a job's page shows.
type JobDetail struct {
	Job    batchapi.ServiceJob `json:"job"`
	Events []batchapi.Event    `json:"events"`
	// Holding is whose capacity a running job of a quota share holds.
	Holding *Holding `json:"holding,omitempty"`
	// Position and Reason tell where a waiting job stands in its share and
	// why it waits; Position is 0 for a job that does not wait.
	Position      int    `json:"position,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Misconfigured bool   `json:"misconfigured,omitempty"`
	// Instances, by attempt as in Job.Attempts, tells where each
	// instance runs; absent when the executor tells no such thing
	// (Options.Instances).
	sharqapi.JobPlacements
	// ETA is a waiting job's estimated start.
	ETA *StartEstimate `json:"eta,omitempty"`
	// Model is where the model of a succeeded job went, and Checkpoints
	// where its checkpoints are saved.
	Model       string `json:"model,omitempty"`
	Checkpoints string `json:"checkpoints,omitempty"`
}

func (c *Console) jobDetail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("job")
	if !c.authorize(w, r, access.ActionGetJobDetail, c.base.Of(arn.ServiceJob, id)) {
		return
	}
	j, err := c.eng.DescribeServiceJob(r.Context(), id)
	if err != nil {
		c.engineError(w, err)
		return
	}
	evs, err := c.eng.JobEvents(j.JobID)
	if err != nil {
		c.engineError(w, err)
		return
	}
	d := JobDetail{Job: batchapi.ServiceJobOf(j), Events: batchapi.EventsOf(evs, c.base)}
	if w, ok := readmodel.WaitOf(c.eng, j.JobID); ok && j.Status == engine.StatusRunnable {
		d.Position, d.Reason, d.Misconfigured = w.Place, w.Reason, w.Misconfigured
		d.ETA = c.estimateOf(j.JobID)
	}
	if h, ok := readmodel.HoldingsOf(c.eng, []string{j.JobID})[j.JobID]; ok && j.QuotaShareName != "" {
		d.Holding = h
	}
	if la := j.LatestAttempt; la != nil {
		loc := optml.LocationsOf(j.ServiceRequestPayload, la.ServiceResourceID.Value)
		if j.Status == engine.StatusSucceeded {
			d.Model = loc.Model
		}
		d.Checkpoints = loc.Checkpoints
	}
	if l := c.opts.Instances; l != nil && len(j.Attempts) > 0 {
		d.Instances = make([][]sharqapi.Placement, len(j.Attempts))
		for i, a := range j.Attempts {
			// The attempt's ID is its training job's name, the last part of the ARN.
			d.Instances[i] = placements(l.Instances(path.Base(a.ServiceResourceID.Value)))
		}
	}
	writeJSON(w, d)
}

// placements is what the executor tells of an attempt's instances in the
// API's shape; nil stays nil. The conversion compiles only while both
// shapes have the same fields.
func placements(is []executor.Instance) []sharqapi.Placement {
	if is == nil {
		return nil
	}
	out := make([]sharqapi.Placement, len(is))
	for i, in := range is {
		out[i] = sharqapi.Placement(in)
	}
	return out
}

// PriorityRequest is the body of POST /sharq/v1/jobs/{job}/priority.
type PriorityRequest struct {
	SchedulingPriority *int `json:"schedulingPriority"`
}

// setPriority runs UpdateServiceJob, which checks the priority and
// authorizes the caller.
func (c *Console) setPriority(w http.ResponseWriter, r *http.Request) {
	var req PriorityRequest
	if !decodeBody(w, r, &req) {
		return
	}
	j, err := c.jobs.UpdateServiceJob(r.Context(), r.PathValue("job"), req.SchedulingPriority)
	if err != nil {
		c.engineError(w, err)
		return
	}
	// Changes made by people are worth a line each, as the API's own
	// requests are not logged above debug.
	c.log.Info("console: priority changed", "job", j.JobID, "name", j.JobName, "priority", j.SchedulingPriority, "remote", r.RemoteAddr)
	j.ServiceRequestPayload = ""
	writeJSON(w, j)
}

// TerminateRequest is the body of POST /sharq/v1/jobs/{job}/terminate.
type TerminateRequest struct {
	Reason string `json:"reason"`
}

// terminate runs TerminateServiceJob, which authorizes the caller; the
// reason defaults to one naming the console.
func (c *Console) terminate(w http.ResponseWriter, r *http.Request) {
	var req TerminateRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Reason == "" {
		req.Reason = "Terminated from the sharq console"
	}
	if err := c.jobs.TerminateServiceJob(r.Context(), r.PathValue("job"), req.Reason); err != nil {
		c.engineError(w, err)
		return
	}
	c.log.Info("console: job terminated", "job", r.PathValue("job"), "reason", req.Reason, "remote", r.RemoteAddr)
	writeJSON(w, struct{}{})
}

// decodeBody reads a JSON body, answering 415 or 400 when it is not one.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "body is not valid JSON for this request: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) { jsonhttp.Write(w, v) }

func writeError(w http.ResponseWriter, status int, msg string) { jsonhttp.WriteError(w, status, msg) }

func (c *Console) engineError(w http.ResponseWriter, err error) {
	jsonhttp.EngineError(w, c.log, "console", err)
}
