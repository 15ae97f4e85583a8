package sharqapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// Ensure positions say whose capacity a running job holds (own, or
// borrowed from which share, and whether that share can take it back), and
// the shares route splits borrowed and lent capacity by share.
func TestHoldingRoutes(t *testing.T) {
	s := start(t, sharqapi.Options{})
	high, med, low := s.walkthrough()
	r := s.do("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+high+`","`+med+`","`+low+`"]}`)
	want := `"holding":{"own":[],"borrowed":[{"unit":"ml.g5.xlarge","count":1,"lender":"QS2","reclaimable":false}]}`
	if !strings.Contains(r.body, want) {
		t.Errorf("positions answer %s lacks %s", r.body, want)
	}
	var p sharqapi.Positions
	s.get("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+high+`","`+med+`","`+low+`"]}`, &p)
	got := map[string]*sharqapi.Holding{}
	for _, j := range p.Jobs {
		got[j.JobID] = j.Holding
	}
	if diff := cmp.Diff(map[string]*sharqapi.Holding{
		high: {Own: []sharqapi.Instances{{Unit: "ml.g5.xlarge", Count: 1}}, Borrowed: []sharqapi.Loan{}},
		med:  {Own: []sharqapi.Instances{}, Borrowed: []sharqapi.Loan{{Unit: "ml.g5.xlarge", Count: 1, Lender: "QS2"}}},
		low:  nil,
	}, got); diff != "" {
		t.Errorf("holdings (-want +got):\n%s", diff)
	}

	var u sharqapi.Usage
	s.get("GET", "/sharq/v1/shares", "", &u)
	split := map[string][2][]sharqapi.ShareCount{}
	for _, sh := range u.Queues[0].Shares {
		split[sh.Name] = [2][]sharqapi.ShareCount{sh.Units[0].BorrowedFrom, sh.Units[0].LentTo}
	}
	if diff := cmp.Diff(map[string][2][]sharqapi.ShareCount{
		"QS1": {{{Share: "QS2", Count: 1}}, nil},
		"QS2": {nil, {{Share: "QS1", Count: 1}}},
		"QS3": {nil, nil},
	}, split); diff != "" {
		t.Errorf("borrowed from and lent to (-want +got):\n%s", diff)
	}
}
