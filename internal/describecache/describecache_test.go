package describecache_test

import (
	"reflect"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/describecache"
	"github.com/sharq-dev/sharq/internal/record"
)

// Ensure a job is kept only once a cycle has published heads, is described
// as it was kept even when its record changes afterwards, and is dropped by
// the cycle that changes it, or by the cycle that finds the limit reached.
// The engine's TestDescribeWithoutLock compares the cache with describes
// under the lock through random runs.
func TestKeepDescribeForget(t *testing.T) {
	cr := core.New()
	c := describecache.New(2)
	j := &record.Job{JobID: "a", Status: record.StatusSucceeded, Tags: map[string]string{"k": "v"}}
	c.Keep(j, cr)
	if _, ok := c.Describe("a"); ok || c.Kept() != 0 {
		t.Fatal("a job kept before any heads were published")
	}
	c.Publish(cr, nil) // a describe asked for heads
	c.Keep(j, cr)
	want := record.Detached(j)
	j.Tags["k"] = "changed in place"
	got, ok := c.Describe("a")
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("described %+v, %v; want %+v", got, ok, want)
	}
	c.Publish(cr, map[string]*record.Job{"a": j})
	if _, ok := c.Describe("a"); ok {
		t.Fatal("a job changed by a cycle is still kept")
	}

	// No job kept and no describe asking: heads are dropped, and wanted
	// again by the next keep.
	c.Keep(j, cr)
	if c.Kept() != 0 {
		t.Fatal("a job kept while no heads are published")
	}
	c.Publish(cr, nil)
	for _, id := range []string{"a", "b"} {
		c.Keep(&record.Job{JobID: id, Status: record.StatusSucceeded}, cr)
	}
	c.Keep(&record.Job{JobID: "c", Status: record.StatusSucceeded}, cr)
	if n := c.Kept(); n != 2 {
		t.Fatalf("%d kept, limit 2", n)
	}
	c.Publish(cr, nil)
	if n := c.Kept(); n != 0 {
		t.Fatalf("%d kept after a cycle found the limit reached", n)
	}
	c.Keep(&record.Job{JobID: "d", Status: record.StatusSucceeded}, cr)
	c.Reset()
	if _, ok := c.Describe("d"); ok || c.Kept() != 0 {
		t.Fatal("a job kept after a reset")
	}
}

// Ensure a nil cache keeps nothing and describes nothing.
func TestNil(t *testing.T) {
	var c *describecache.Cache
	cr := core.New()
	c.Publish(cr, nil)
	c.Keep(&record.Job{JobID: "a"}, cr)
	c.Forget("a")
	c.Reset()
	if _, ok := c.Describe("a"); ok {
		t.Fatal("a nil cache described a job")
	}
}
