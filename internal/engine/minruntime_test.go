package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// TestMinimumRuntimeKeptByUpdate: AWS's UpdateQuotaShare, which knows
// nothing of sharq's minimum runtime, keeps it; the share reports it.
func TestMinimumRuntimeKeptByUpdate(t *testing.T) {
	ctx := context.Background()
	h, _, _ := syncEngine(t, engine.Options{})
	arn := "arn:aws:batch:us-east-1:000000000000:job-queue/my-sm-training-qm-jq/quota-share/QS1"
	s, err := h.e.SetQuotaShareMinimumRuntime(ctx, arn, 300)
	if err != nil {
		t.Fatal(err)
	}
	if s.MinimumRuntimeSeconds != 300 {
		t.Fatalf("set: %d", s.MinimumRuntimeSeconds)
	}
	if _, err := h.e.UpdateQuotaShare(ctx, batchmodel.UpdateQuotaShareInput{QuotaShareArn: arn,
		PreemptionConfiguration: &record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}}); err != nil {
		t.Fatal(err)
	}
	if s, err = h.e.DescribeQuotaShare(ctx, arn); err != nil || s.MinimumRuntimeSeconds != 300 {
		t.Fatalf("after update: %d, %v", s.MinimumRuntimeSeconds, err)
	}
	for _, st := range h.e.Shares() {
		want := time.Duration(0)
		if st.Share == "QS1" {
			want = 300 * time.Second
		}
		if st.MinimumRuntime != want {
			t.Errorf("%s: minimum runtime %v, want %v", st.Share, st.MinimumRuntime, want)
		}
	}
	if _, err := h.e.SetQuotaShareMinimumRuntime(ctx, arn, batchmodel.MaxMinimumRuntimeSeconds+1); engine.ErrorCode(err) != engine.Invalid {
		t.Errorf("a minimum beyond a year: %v", err)
	}
}
