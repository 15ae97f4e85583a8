package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// TestTraceExportEndpointFromEnvironment: without --endpoint or
// --data-dir, trace export reads the server $SHARQ_ENDPOINT names, as the
// other verbs do.
func TestTraceExportEndpointFromEnvironment(t *testing.T) {
	ctx := context.Background()
	ex := simulated.New()
	defer ex.Close()
	eng, err := engine.New(ctx, engine.Options{Store: memstore.New(), Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	cfg, err := clusterconfig.Load("../../examples/announcement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterconfig.Apply(ctx, eng, cfg); err != nil {
		t.Fatal(err)
	}
	prio := 1
	if _, err := eng.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "from-env", JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
		QuotaShareName: "QS1", SchedulingPriority: &prio,
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},"StoppingCondition":{"MaxRuntimeInSeconds":60}}`}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(batchapi.New(eng, batchapi.Options{}))
	defer srv.Close()
	t.Setenv("SHARQ_ENDPOINT", srv.URL)
	t.Setenv("AWS_ENDPOINT_URL_BATCH", "")
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"trace", "export"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "QS1") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
