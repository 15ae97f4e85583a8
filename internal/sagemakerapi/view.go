package sagemakerapi

import (
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Training job statuses, as SageMaker names them.
const (
	InProgress = "InProgress"
	Completed  = "Completed"
	Failed     = "Failed"
	Stopping   = "Stopping"
	Stopped    = "Stopped"
)

// completedReason is the engine's reason for an attempt that succeeded.
const completedReason = "Training job completed"

// Transition is one SecondaryStatusTransitions entry; times are epoch ms
// (End 0 while current).
type Transition struct {
	Status     string
	Start, End int64
	Message    string
}

// View is one attempt of a service job seen as a SageMaker training job.
// Times are epoch milliseconds, 0 when not reached.
type View struct {
	Name, Arn string
	Job       record.Job
	// Live is true while the attempt is the job's current one and has not
	// ended: the one StopTrainingJob may stop.
	Live                  bool
	Status, Secondary     string
	FailureReason         string
	Created, Started, End int64
	Modified              int64
	Transitions           []Transition
}

// ViewOf is the training job name of j's attempts, or false when j has no
// attempt of that name.
func ViewOf(j record.Job, name string) (View, bool) {
	i := -1
	for k, a := range j.Attempts {
		if strings.HasSuffix(a.ServiceResourceID.Value, "/"+name) {
			i = k
		}
	}
	if i < 0 {
		return View{}, false
	}
	a := j.Attempts[i]
	v := View{Name: name, Arn: a.ServiceResourceID.Value, Job: j, Started: a.StartedAt, End: a.StoppedAt}
	v.Transitions = transitions(j, i)
	v.Created = j.CreatedAt
	if len(v.Transitions) > 0 {
		v.Created = v.Transitions[0].Start
	}
	v.Live = i == len(j.Attempts)-1 && a.StoppedAt == 0 && (j.Status == record.StatusScheduled ||
		j.Status == record.StatusStarting || j.Status == record.StatusRunning)
	switch {
	case v.Live:
		v.Status = InProgress
		v.Secondary = secondaryOf(j.Status)
		if j.Status == record.StatusRunning && strings.HasPrefix(j.StatusReason, "Uploading ") {
			// The executor's reason while the outputs go out: the history
			// keeps statuses only, so no transition records it.
			v.Secondary = "Uploading"
		}
	case a.Stopping():
		// Preempted, its processes still in their grace period.
		v.Status, v.Secondary = Stopping, Stopping
	case a.StatusReason == completedReason:
		v.Status, v.Secondary = Completed, Completed
	case strings.HasPrefix(a.StatusReason, "Preempted:") || i == len(j.Attempts)-1 && j.IsTerminated:
		v.Status, v.Secondary = Stopped, Stopped
	default:
		v.Status, v.Secondary, v.FailureReason = Failed, Failed, a.StatusReason
	}
	if !v.Live && a.StoppedAt != 0 {
		if n := len(v.Transitions); n > 0 && v.Transitions[n-1].End == 0 {
			v.Transitions[n-1].End = a.StoppedAt
		}
		msg := a.StatusReason
		if v.Status == Completed {
			msg = "Training job completed"
		}
		v.Transitions = append(v.Transitions, Transition{Status: v.Secondary, Start: a.StoppedAt, Message: msg})
	}
	v.Modified = v.Created
	if n := len(v.Transitions); n > 0 {
		v.Modified = v.Transitions[n-1].Start
	}
	return v, true
}

// secondaryOf is the SecondaryStatus of a job's live attempt.
func secondaryOf(status string) string {
	switch status {
	case record.StatusScheduled:
		return "Pending"
	case record.StatusStarting:
		return "Downloading"
	}
	return "Training"
}

// transitionMessages are what SageMaker says as each secondary status
// begins.
var transitionMessages = map[string]string{
	"Pending":     "Preparing the instances for training",
	"Downloading": "Downloading input data",
	"Training":    "Training image download completed. Training in progress.",
}

// transitions are the secondary statuses attempt i went through, from the
// job's history: the attempt is the i-th time the job was SCHEDULED, and
// lasts until the next.
func transitions(j record.Job, i int) []Transition {
	var out []Transition
	seen := -1
	for _, h := range j.History {
		if h.Status == record.StatusScheduled {
			seen++
		}
		if seen < i {
			continue
		}
		if seen > i {
			break
		}
		if h.Status != record.StatusScheduled && h.Status != record.StatusStarting && h.Status != record.StatusRunning {
			break
		}
		if n := len(out); n > 0 {
			out[n-1].End = h.At
		}
		s := secondaryOf(h.Status)
		out = append(out, Transition{Status: s, Start: h.At, Message: transitionMessages[s]})
	}
	return out
}

// Hosts are the names of the training job's hosts (algo-1 ...), from its
// payload.
func (v View) Hosts() []string {
	r, err := trainingjob.ParseString(v.Job.ServiceRequestPayload)
	if err != nil {
		return []string{"algo-1"}
	}
	return optml.Names(optml.Cluster(r))
}

// LogStream names the CloudWatch log stream of one host, as SageMaker
// does: <training job>/<host>-<epoch seconds the attempt began>.
func (v View) LogStream(host string) string {
	return v.Name + "/" + host + "-" + strconv.FormatInt(v.Created/1000, 10)
}

// ModelArtifacts is where a completed training job's model went ("" for
// any other, or a payload that names no output).
func (v View) ModelArtifacts() string {
	if v.Status != Completed {
		return ""
	}
	return optml.LocationsOf(v.Job.ServiceRequestPayload, v.Name).Model
}
