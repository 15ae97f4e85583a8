package engine_test

import (
	"context"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
)

// Ensure a resource is found by its name or ID and by this server's ARN
// of it, and an ARN of another region, account or kind finds nothing.
func TestForeignARNsFindNothing(t *testing.T) {
	ctx := context.Background()
	h, _, _ := syncEngine(t, engine.Options{})
	e := h.e
	id := h.submit("job", "QS1", 1)
	const own = "arn:aws:batch:us-east-1:000000000000:"
	for _, ref := range []string{id, own + "service-job/" + id} {
		if _, err := e.DescribeServiceJob(ctx, ref); err != nil {
			t.Errorf("DescribeServiceJob(%s): %v", ref, err)
		}
	}
	for _, ref := range []string{
		"arn:aws:batch:eu-west-1:000000000000:service-job/" + id,
		"arn:aws:batch:us-east-1:999999999999:service-job/" + id,
		"arn:aws-cn:batch:us-east-1:000000000000:service-job/" + id,
		own + "job-queue/" + id,
	} {
		if _, err := e.DescribeServiceJob(ctx, ref); engine.ErrorCode(err) != engine.NotFound {
			t.Errorf("DescribeServiceJob(%s): %v, want not found", ref, err)
		}
		if err := e.TerminateServiceJob(ctx, ref, "no"); engine.ErrorCode(err) != engine.NotFound {
			t.Errorf("TerminateServiceJob(%s): %v, want not found", ref, err)
		}
	}
	if _, err := e.ListTagsForResource(ctx, "arn:aws:batch:eu-west-1:000000000000:job-queue/my-sm-training-qm-jq"); engine.ErrorCode(err) != engine.NotFound {
		t.Errorf("tags of another region's queue: %v, want not found", err)
	}
	if _, err := e.ListTagsForResource(ctx, own+"job-queue/my-sm-training-qm-jq"); err != nil {
		t.Errorf("tags of this server's queue: %v", err)
	}
}
