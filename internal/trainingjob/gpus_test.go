package trainingjob_test

import (
	"testing"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Ensure GPU types count their GPUs, CPU and unknown types none, and a
// caller's copy of the table leaves the table alone.
func TestGPUs(t *testing.T) {
	for typ, want := range map[string]int{
		"ml.g5.xlarge": 1, "ml.g5.12xlarge": 4, "ml.p4d.24xlarge": 8,
		"ml.m5.large": 0, "ml.trn1.32xlarge": 0, "custom.gpu": 0,
	} {
		if got := trainingjob.GPUs(typ); got != want {
			t.Errorf("GPUs(%s) = %d, want %d", typ, got, want)
		}
	}
	table := trainingjob.GPUTable()
	table["ml.m5.large"] = 2
	if got := trainingjob.GPUs("ml.m5.large"); got != 0 {
		t.Errorf("changing a copy of the table changed GPUs(ml.m5.large) to %d", got)
	}
}
