package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// DefaultRuntime stands for the runtime of a job that has not finished and
// whose payload sets no StoppingCondition.MaxRuntimeInSeconds.
const DefaultRuntime = time.Hour

// FromJobs turns a server's job records into a workload: each job is
// submitted at its createdAt (relative to the first), with its share,
// priority and capacity; it runs as long as its last attempt ran when it
// ended (succeeded or failed), else for the payload's MaxRuntimeInSeconds,
// else for DefaultRuntime; a terminated job, and a failed one that never
// ran, is cancelled when it stopped. guessed counts the jobs not ended
// whose runtime is DefaultRuntime.
func FromJobs(jobs []batchapi.ServiceJob) (w *Workload, guessed int) {
	w = &Workload{Name: "exported"}
	if len(jobs) == 0 {
		return w, 0
	}
	first := slices.MinFunc(jobs, func(a, b batchapi.ServiceJob) int { return int(a.CreatedAt - b.CreatedAt) }).CreatedAt
	for _, sj := range jobs {
		if len(sj.CapacityUsage) == 0 {
			continue
		}
		j := Job{
			ID: sj.JobID, Name: sj.JobName, At: ms(sj.CreatedAt - first), Queue: lastPart(sj.JobQueue, "job-queue/"),
			Share: sj.QuotaShareName, Priority: sj.SchedulingPriority,
			InstanceType: sj.CapacityUsage[0].CapacityUnit, Count: int(sj.CapacityUsage[0].Quantity),
		}
		if len(sj.CapacityUsage) > 1 { // instance groups of several types
			for _, u := range sj.CapacityUsage {
				j.Groups = append(j.Groups, InstanceGroup{Type: u.CapacityUnit, Count: int(u.Quantity)})
			}
		}
		ended := sj.Status == record.StatusSucceeded || sj.Status == record.StatusFailed
		ran, measured := ranFor(sj)
		switch {
		case ended && measured:
			j.Runtime = ran
		default:
			var ok bool
			if j.Runtime, ok = declaredRuntime(sj); !ok && !ended {
				guessed++
			}
		}
		if pc := sj.PreemptionConfiguration; pc != nil {
			j.PreemptionRetries = pc.PreemptionRetriesBeforeTermination
		}
		if (sj.IsTerminated || (ended && !measured && sj.Status == record.StatusFailed)) && sj.StoppedAt > 0 {
			j.Changes = append(j.Changes, Change{At: ms(max(sj.StoppedAt, sj.CreatedAt) - first), Cancel: true})
		}
		w.Jobs = append(w.Jobs, j)
	}
	w.Sort()
	return w, guessed
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func lastPart(arn, sep string) string {
	if i := strings.LastIndex(arn, sep); i >= 0 {
		return arn[i+len(sep):]
	}
	return arn
}

// ranFor is how long the job's last attempt ran; ok is false when it did
// not start or has not stopped.
func ranFor(sj batchapi.ServiceJob) (time.Duration, bool) {
	if len(sj.Attempts) == 0 {
		return 0, false
	}
	a := sj.Attempts[len(sj.Attempts)-1]
	if a.StartedAt > 0 && a.StoppedAt >= a.StartedAt {
		return ms(a.StoppedAt - a.StartedAt), true
	}
	return 0, false
}

// declaredRuntime is the payload's MaxRuntimeInSeconds; ok is false when
// it sets none, and the runtime is DefaultRuntime.
func declaredRuntime(sj batchapi.ServiceJob) (time.Duration, bool) {
	// A runtime too long for a time.Duration would wrap around.
	if p, err := trainingjob.Parse([]byte(sj.ServiceRequestPayload)); err == nil {
		if n := p.StoppingCondition.MaxRuntimeInSeconds; n > 0 && n <= math.MaxInt64/int64(time.Second) {
			return time.Duration(n) * time.Second, true
		}
	}
	return DefaultRuntime, false
}

// JobsFromStore reads every job a server's store holds (its data
// directory's database), ended ones included until retention purged them.
func JobsFromStore(ctx context.Context, st store.Store) ([]batchapi.ServiceJob, error) {
	var out []batchapi.ServiceJob
	err := st.Jobs(ctx, func(j store.Job) error {
		rec, err := record.DecodeJob(j.Doc)
		if err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
		out = append(out, batchapi.ServiceJobOf(*rec))
		return nil
	})
	return out, err
}

// jobStatuses are those ListServiceJobs is asked for in turn: without a
// status it lists only RUNNING jobs.
var jobStatuses = []string{"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"}

// JobsFromServer reads every job of a live server through its AWS Batch
// API (ListServiceJobs per status, then DescribeServiceJob per job). The
// requests are unsigned, as a sharq server accepts them.
func JobsFromServer(ctx context.Context, hc *http.Client, endpoint string) ([]batchapi.ServiceJob, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	api := batchCaller{hc: hc, base: strings.TrimRight(endpoint, "/")}
	var ids []string
	for _, status := range jobStatuses {
		next := ""
		for {
			var page struct {
				JobSummaryList []struct{ JobID string } `json:"jobSummaryList"`
				NextToken      string                   `json:"nextToken"`
			}
			req := map[string]any{"jobStatus": status, "maxResults": 100}
			if next != "" {
				req["nextToken"] = next
			}
			if err := api.call(ctx, "listservicejobs", req, &page); err != nil {
				return nil, err
			}
			for _, s := range page.JobSummaryList {
				ids = append(ids, s.JobID)
			}
			if next = page.NextToken; next == "" {
				break
			}
		}
	}
	out := make([]batchapi.ServiceJob, 0, len(ids))
	for _, id := range ids {
		var sj batchapi.ServiceJob
		if err := api.call(ctx, "describeservicejob", map[string]string{"jobId": id}, &sj); err != nil {
			return nil, err
		}
		out = append(out, sj)
	}
	return out, nil
}

type batchCaller struct {
	hc   *http.Client
	base string
}

func (b batchCaller) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/v1/"+op, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", op, resp.Status, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}
