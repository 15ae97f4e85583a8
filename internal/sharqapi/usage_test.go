package sharqapi_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure the usage route reports the walkthrough's capacity: QS1's own
// instance, the one it borrows from QS2, and QS2's side of it, growing
// while the jobs run; and that bad queries are refused in words.
func TestUsageRoute(t *testing.T) {
	s := start(t, sharqapi.Options{})
	s.walkthrough()
	read := func() map[string]float64 {
		t.Helper()
		r := s.do("GET", "/sharq/v1/usage?since=1h&by=share", "")
		var rep sharqapi.UsageReport
		if err := json.Unmarshal([]byte(r.body), &rep); err != nil || r.status != 200 {
			t.Fatalf("usage: %d %s", r.status, r.body)
		}
		if rep.By != "share" || rep.To-rep.From != 3_600_000 || rep.Every != 0 {
			t.Errorf("report of %d..%d every %d by %s, want an hour up to now by share", rep.From, rep.To, rep.Every, rep.By)
		}
		got := map[string]float64{}
		for _, row := range rep.Rows {
			if row.Queue != queue || row.GPUSeconds != row.InstanceSeconds {
				t.Errorf("row %+v: want queue %s and one GPU per instance", row, queue)
			}
			got[row.Key+" "+row.Kind+" "+row.Peer] = row.InstanceSeconds
		}
		return got
	}
	var first map[string]float64
	testwait.Until(t, 10*time.Second, func() error {
		first = read()
		for _, k := range []string{"QS1 own ", "QS1 borrowed QS2", "QS2 lent QS1"} {
			if first[k] <= 0 {
				return fmt.Errorf("no %q in %v", k, first)
			}
		}
		return nil
	})
	if len(first) != 3 || first["QS1 borrowed QS2"] != first["QS2 lent QS1"] {
		t.Errorf("usage %v: want own, borrowed and lent, borrowed as lent", first)
	}
	testwait.Until(t, 10*time.Second, func() error {
		if second := read(); second["QS1 own "] <= first["QS1 own "] {
			return fmt.Errorf("own use did not grow while the job runs: %v then %v", first, second)
		}
		return nil
	})
	for _, c := range []struct{ query, want string }{
		{"by=team", `by must be share, share-id, owner or queue, not "team"`},
		{"since=thirty", `invalid duration "thirty"`},
		{"every=1s&since=30d", "10000 buckets at most"},
		{"from=10&to=5", "the period is empty"},
		{"from=yesterday&to=5", `from must be a time in epoch milliseconds, not "yesterday"`},
		{"from=5", "give both from and to, or since"},
		{"since=-1h", "since must be a positive duration"},
	} {
		wantError(t, s.do("GET", "/sharq/v1/usage?"+c.query, ""), 400, c.want)
	}
}
