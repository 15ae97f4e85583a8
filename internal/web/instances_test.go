package web_test

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/web"
)

// placement tells where instances run as the kube executor does: algo-1's
// pod is on a node, algo-2 has no pod (yet).
type placement struct{}

func (placement) Instances(attemptID string) []executor.Instance {
	return []executor.Instance{{Host: "algo-1", Name: attemptID + "-algo-1", Node: "gpu-node-7", Phase: "Running"}, {Host: "algo-2"}}
}

// TestJobPageShowsPods checks that a job's detail carries where each
// attempt's instances run when the executor tells, that the job page shows
// each pod with its node, and that without such an executor neither does.
func TestJobPageShowsPods(t *testing.T) {
	s := startWith(t, web.Options{Instances: placement{}})
	s.setupWalkthrough()
	w := s.step1()
	status, body := request(t, "GET", s.url+"/sharq/v1/console/jobs/"+w.high, "", "")
	var d web.JobDetail
	if err := json.Unmarshal([]byte(body), &d); status != 200 || err != nil {
		t.Fatalf("job detail: %d %s %v", status, body, err)
	}
	if len(d.Job.Attempts) != 1 || len(d.Instances) != 1 || len(d.Instances[0]) != 2 {
		t.Fatalf("job detail: %d attempts, instances %+v; want one attempt with two instances", len(d.Job.Attempts), d.Instances)
	}
	id := path.Base(d.Job.Attempts[0].ServiceResourceID.Value)
	if got := d.Instances[0][0]; got.Name != id+"-algo-1" || got.Node != "gpu-node-7" || got.Phase != "Running" {
		t.Errorf("algo-1: %+v, want its pod on gpu-node-7", got)
	}

	ctx := browser(t)
	do(t, ctx, "open qs1_job_high", chromedp.Navigate(s.url+"/jobs/"+w.high))
	waitFor(t, ctx, "the pods column", `document.querySelector('#attempts .pods li[data-host="algo-2"]') !== null`)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('#attempts .pods li')].map(li => li.textContent)`)
	want := []string{id + "-algo-1 on gpu-node-7 Running", "algo-2: no pod"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("pods shown: %q, want %q", rows, want)
	}
	screenshot(t, ctx, "job-pods")

	plain := start(t)
	plain.setupWalkthrough()
	pw := plain.step1()
	if _, body := request(t, "GET", plain.url+"/sharq/v1/console/jobs/"+pw.high, "", ""); strings.Contains(body, `"instances"`) {
		t.Errorf("job detail without an instance lister: %s, want no instances", body)
	}
	do(t, ctx, "open the job without pods", chromedp.Navigate(plain.url+"/jobs/"+pw.high))
	waitFor(t, ctx, "the attempts table", `document.querySelector('#attempts tbody tr') !== null`)
	if n := eval[int](t, ctx, `document.querySelectorAll('#attempts th').length`); n != 5 {
		t.Errorf("the attempts table has %d columns without an instance lister, want 5 (no pods)", n)
	}
}
