package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// start serves the AWS Batch API and /metrics as serve wires them, over a
// real engine with a SQLite store in a temp dir and the simulated executor.
func start(t *testing.T) (*batch.Client, string) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	return s.BatchClient(), s.URL
}

const queue = "my-sm-training-qm-jq"

func setup(t *testing.T, c *batch.Client) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p, err := c.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{Name: aws.String("my-qm-scheduling-policy"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo}})
	must(p, err)
	must(c.CreateServiceEnvironment(ctx, &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("my-sm-training-qm-se"),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining,
		CapacityLimits:         []types.CapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(3)}}}))
	must(c.CreateJobQueue(ctx, &batch.CreateJobQueueInput{JobQueueName: aws.String(queue), Priority: aws.Int32(1),
		JobQueueType:            types.JobQueueTypeSagemakerTraining,
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("my-sm-training-qm-se")}},
		SchedulingPolicyArn:     p.Arn}))
	for _, s := range []struct {
		name    string
		sharing types.QuotaShareResourceSharingConfiguration
		inShare types.QuotaShareInSharePreemptionState
	}{
		{"QS1", types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyLendAndBorrow, BorrowLimit: aws.Int32(200)}, types.QuotaShareInSharePreemptionStateEnabled},
		{"QS2", types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyLend}, types.QuotaShareInSharePreemptionStateDisabled},
		{"QS3", types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyReserve}, types.QuotaShareInSharePreemptionStateDisabled},
	} {
		must(c.CreateQuotaShare(ctx, &batch.CreateQuotaShareInput{QuotaShareName: aws.String(s.name), JobQueue: aws.String(queue),
			CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(1)}},
			ResourceSharingConfiguration: &s.sharing,
			PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: s.inShare}}))
	}
}

func submit(t *testing.T, c *batch.Client, name, share string, prio int32) string {
	t.Helper()
	out, err := c.SubmitServiceJob(context.Background(), &batch.SubmitServiceJobInput{JobName: aws.String(name), JobQueue: aws.String(queue),
		ServiceJobType: types.ServiceJobTypeSagemakerTraining, QuotaShareName: aws.String(share), SchedulingPriority: aws.Int32(prio),
		ServiceRequestPayload: aws.String(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`)})
	if err != nil {
		t.Fatal(err)
	}
	return *out.JobId
}

func wait(t *testing.T, c *batch.Client, id string, status types.ServiceJobStatus) {
	t.Helper()
	testwait.Until(t, 15*time.Second, func() error {
		j, err := c.DescribeServiceJob(context.Background(), &batch.DescribeServiceJobInput{JobId: aws.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != status {
			return fmt.Errorf("job %s is %s, want %s", *j.JobName, j.Status, status)
		}
		return nil
	})
}

// scrape reads /metrics into samples keyed by their text form, as
// name{label="value", ...} with the labels sorted.
func scrape(t *testing.T, url string) map[string]*model.Sample {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	var list []*dto.MetricFamily
	for _, f := range fams {
		list = append(list, f)
	}
	samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, list...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*model.Sample{}
	for _, s := range samples {
		out[s.Metric.String()] = s
	}
	return out
}

// scrapeUntil scrapes until every wanted sample has its value, for up to
// 5 s: observers hear of a cycle after its answers have gone out, so a
// client can see a job RUNNING a moment before the counters do.
func scrapeUntil(t *testing.T, url string, want map[string]float64) map[string]*model.Sample {
	t.Helper()
	var m map[string]*model.Sample
	testwait.Until(t, 5*time.Second, func() error {
		m = scrape(t, url)
		var bad []string
		for name, v := range want {
			if s, ok := m[name]; !ok {
				bad = append(bad, "no "+name)
			} else if float64(s.Value) != v {
				bad = append(bad, fmt.Sprintf("%s = %v, want %v", name, s.Value, v))
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return errors.New("\n" + strings.Join(bad, "\n"))
		}
		return nil
	})
	return m
}

// TestMetricsAfterWalkthrough runs the walkthrough through the AWS SDK and
// checks what /metrics then says: one cross-share and one in-share
// preemption, dispatches by how they found capacity, the shares' capacity,
// job counts and the API requests by operation and result.
func TestMetricsAfterWalkthrough(t *testing.T) {
	c, url := start(t)
	setup(t, c)
	high, med, low := submit(t, c, "qs1_job_high", "QS1", 3), submit(t, c, "qs1_job_med", "QS1", 2), submit(t, c, "qs1_job_low", "QS1", 1)
	wait(t, c, high, types.ServiceJobStatusRunning)
	wait(t, c, med, types.ServiceJobStatusRunning)
	qs2 := submit(t, c, "qs2_job_1", "QS2", 1)
	wait(t, c, qs2, types.ServiceJobStatusRunning)
	wait(t, c, med, types.ServiceJobStatusRunnable)
	if _, err := c.UpdateServiceJob(context.Background(), &batch.UpdateServiceJobInput{JobId: aws.String(low), SchedulingPriority: aws.Int32(4)}); err != nil {
		t.Fatal(err)
	}
	wait(t, c, low, types.ServiceJobStatusRunning)
	wait(t, c, high, types.ServiceJobStatusRunnable)
	// A ClientException: this queue needs a quota share name.
	_, err := c.SubmitServiceJob(context.Background(), &batch.SubmitServiceJobInput{JobName: aws.String("x"), JobQueue: aws.String(queue),
		ServiceJobType: types.ServiceJobTypeSagemakerTraining, ServiceRequestPayload: aws.String(`{}`)})
	var ce *types.ClientException
	if !errors.As(err, &ce) {
		t.Fatalf("submit without a share: %v, want a ClientException", err)
	}

	want := map[string]float64{
		`sharq_preemptions_total{kind="cross-share", queue="my-sm-training-qm-jq", share="QS1"}`:              1,
		`sharq_preemptions_total{kind="in-share", queue="my-sm-training-qm-jq", share="QS1"}`:                 1,
		`sharq_dispatches_total{borrowed="true", queue="my-sm-training-qm-jq", share="QS1", via="idle"}`:      1,
		`sharq_dispatches_total{borrowed="false", queue="my-sm-training-qm-jq", share="QS2", via="reclaim"}`:  1,
		`sharq_dispatches_total{borrowed="false", queue="my-sm-training-qm-jq", share="QS1", via="in-share"}`: 1,
		`sharq_dispatch_wait_seconds_count{queue="my-sm-training-qm-jq", share="QS1"}`:                        3,
		`sharq_share_capacity_limit{queue="my-sm-training-qm-jq", share="QS1", unit="ml.g5.xlarge"}`:          1,
		`sharq_share_capacity_used{queue="my-sm-training-qm-jq", share="QS1", unit="ml.g5.xlarge"}`:           1,
		`sharq_share_capacity_used{queue="my-sm-training-qm-jq", share="QS2", unit="ml.g5.xlarge"}`:           1,
		`sharq_share_capacity_borrowed{queue="my-sm-training-qm-jq", share="QS1", unit="ml.g5.xlarge"}`:       0,
		`sharq_share_capacity_lent{queue="my-sm-training-qm-jq", share="QS2", unit="ml.g5.xlarge"}`:           0,
		`sharq_share_capacity_idle{queue="my-sm-training-qm-jq", share="QS3", unit="ml.g5.xlarge"}`:           1,
		`sharq_share_runnable_jobs{queue="my-sm-training-qm-jq", share="QS1"}`:                                2,
		`sharq_jobs{status="RUNNING"}`:                                                     2,
		`sharq_jobs{status="RUNNABLE"}`:                                                    2,
		`sharq_job_transitions_total{status="RUNNING"}`:                                    4,
		`sharq_api_requests_total{operation="submitservicejob", result="2xx"}`:             4,
		`sharq_api_requests_total{operation="submitservicejob", result="ClientException"}`: 1,
		`sharq_api_requests_total{operation="updateservicejob", result="2xx"}`:             1,
		`sharq_api_requests_total{operation="createquotashare", result="2xx"}`:             3,
	}
	m := scrapeUntil(t, url, want)
	if s := m[`sharq_cycle_duration_seconds_count`]; s == nil || s.Value < 5 {
		t.Errorf("cycle durations: %v", s)
	}
	// The waits for describes above did read the engine; whether any read
	// waited for a cycle depends on timing, but the counters are there.
	if s := m[`sharq_engine_reads_total`]; s == nil || s.Value < 1 {
		t.Errorf("engine reads: %v", s)
	}
	for _, name := range []string{`sharq_engine_read_waits_total`, `sharq_engine_read_wait_seconds_total`, `sharq_engine_unlocked_reads_total`} {
		if m[name] == nil {
			t.Errorf("%s is missing", name)
		}
	}
	checkUsageCounters(t, url, m)
}

// checkUsageCounters checks the walkthrough's usage counters: QS1's own
// and borrowed capacity (med borrowed QS2's instance until QS2 reclaimed
// it), QS2's side of the loan and its own, the preempted attempts' part;
// GPU-seconds as instance-seconds (one GPU per ml.g5.xlarge); and that
// the counters of running jobs grow.
func checkUsageCounters(t *testing.T, url string, m map[string]*model.Sample) {
	t.Helper()
	series := func(name, share, kind string) string {
		return fmt.Sprintf(`%s{kind="%s", queue="my-sm-training-qm-jq", share="%s"}`, name, kind, share)
	}
	for _, c := range []struct{ share, kind string }{{"QS1", "own"}, {"QS1", "borrowed"}, {"QS1", "preempted"}, {"QS2", "own"}, {"QS2", "lent"}} {
		inst, gpu := m[series("sharq_usage_instance_seconds_total", c.share, c.kind)], m[series("sharq_usage_gpu_seconds_total", c.share, c.kind)]
		if inst == nil || gpu == nil || inst.Value <= 0 || gpu.Value != inst.Value {
			t.Errorf("%s %s: instance-seconds %v, GPU-seconds %v: want the same, above 0", c.share, c.kind, inst, gpu)
		}
	}
	if b, l := m[series("sharq_usage_instance_seconds_total", "QS1", "borrowed")], m[series("sharq_usage_instance_seconds_total", "QS2", "lent")]; b != nil && l != nil && b.Value != l.Value {
		t.Errorf("QS1 borrowed %v s, QS2 lent %v s: the same loan", b.Value, l.Value)
	}
	own := series("sharq_usage_instance_seconds_total", "QS2", "own")
	testwait.True(t, 5*time.Second, own+" to grow while QS2's job runs", func() bool {
		later := scrape(t, url)[own]
		return later != nil && later.Value > m[own].Value
	})
}

// TestAPIOperationLabels checks how requests are named: by path segment,
// tags for the tag routes, unknown for paths the API does not serve.
func TestAPIOperationLabels(t *testing.T) {
	_, url := start(t)
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/describejobqueues"},
		{"GET", "/v1/tags/arn%3Aaws%3Abatch%3Aus-east-1%3A000000000000%3Ajob-queue%2Fnope"},
		{"POST", "/v1/no-such-operation"},
		{"POST", "/v1/no-such-operation-either"},
	} {
		req, _ := http.NewRequest(r.method, url+r.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	scrapeUntil(t, url, map[string]float64{
		`sharq_api_requests_total{operation="describejobqueues", result="2xx"}`:   1,
		`sharq_api_requests_total{operation="tags", result="ClientException"}`:    1,
		`sharq_api_requests_total{operation="unknown", result="ClientException"}`: 2,
	})
}
