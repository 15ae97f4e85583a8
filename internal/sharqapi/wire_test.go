package sharqapi_test

import (
	"encoding/json"
	"testing"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// wireUnits is a unit with every field set, lent and borrowed both.
var wireUnits = []sharqapi.UnitUsage{{Unit: "ml.g5.xlarge", Limit: 4, Used: 3, Own: 1, Borrowed: 2, Lent: 1, Idle: 1,
	BorrowedFrom: []sharqapi.ShareCount{{Share: "QS2", Count: 2, Reclaimable: true}}, LentTo: []sharqapi.ShareCount{{Share: "QS3", Count: 1}}}}

// TestWireShapes pins the JSON of the read routes, field names and order,
// so that the CLI and scripts written against a server keep reading it.
func TestWireShapes(t *testing.T) {
	eta := &sharqapi.StartEstimate{Estimate: sharqapi.Estimate{Kind: "ESTIMATED", At: 2000, Basis: []string{"MAX_RUNTIME"}}, EstimatedAt: 1000}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"usage", sharqapi.Usage{JobCounts: map[string]int{"RUNNABLE": 1, "RUNNING": 2}, Queues: []sharqapi.QueueUsage{{
			Name: "q", State: "ENABLED", ServiceEnvironment: "se", Capacity: wireUnits,
			Shares: []sharqapi.Share{{Name: "QS1", State: "ENABLED", Strategy: "STRICT", BorrowLimit: -1, InSharePreemption: true,
				MinimumRuntimeSeconds: 60, Runnable: 5, Units: wireUnits}, {Name: "", State: "ENABLED", Units: []sharqapi.UnitUsage{}}},
		}}},
			`{"queues":[{"name":"q","state":"ENABLED","serviceEnvironment":"se","capacity":[{"unit":"ml.g5.xlarge","limit":4,"used":3,"own":1,"borrowed":2,"lent":1,"idle":1,"borrowedFrom":[{"share":"QS2","count":2,"reclaimable":true}],"lentTo":[{"share":"QS3","count":1}]}],` +
				`"shares":[{"name":"QS1","state":"ENABLED","strategy":"STRICT","borrowLimit":-1,"inSharePreemption":true,"minimumRuntimeSeconds":60,"runnable":5,"units":[{"unit":"ml.g5.xlarge","limit":4,"used":3,"own":1,"borrowed":2,"lent":1,"idle":1,"borrowedFrom":[{"share":"QS2","count":2,"reclaimable":true}],"lentTo":[{"share":"QS3","count":1}]}]},` +
				`{"name":"","state":"ENABLED","borrowLimit":0,"inSharePreemption":false,"runnable":0,"units":[]}]}],"jobCounts":{"RUNNABLE":1,"RUNNING":2}}`},
		{"positions", sharqapi.Positions{Unknown: []string{"nope"}, Jobs: []sharqapi.Position{
			{JobID: "a", Queue: "q", Share: "QS1", Status: "RUNNABLE", Priority: 3, Place: 1, Reason: "WAITING", Misconfigured: true, Preemptions: 2, Owner: "o", ETA: eta},
			{JobID: "b", Queue: "q", Status: "RUNNING", Holding: &sharqapi.Holding{Own: []sharqapi.Instances{{Unit: "u", Count: 1}},
				Borrowed: []sharqapi.Loan{{Unit: "u", Count: 2, Lender: "QS2", Reclaimable: true}}}},
		}},
			`{"jobs":[{"jobId":"a","queue":"q","share":"QS1","status":"RUNNABLE","priority":3,"place":1,"reason":"WAITING","misconfigured":true,"preemptions":2,"owner":"o","eta":{"kind":"ESTIMATED","at":2000,"basis":["MAX_RUNTIME"],"estimatedAt":1000}},` +
				`{"jobId":"b","queue":"q","status":"RUNNING","priority":0,"preemptions":0,"holding":{"own":[{"unit":"u","count":1}],"borrowed":[{"unit":"u","count":2,"lender":"QS2","reclaimable":true}]}}],"unknown":["nope"]}`},
		{"estimates", sharqapi.Estimates{EstimatedAt: 1000, Until: 3000, Stop: "HORIZON", Jobs: []sharqapi.JobEstimate{{JobID: "a", StartEstimate: *eta}}},
			`{"estimatedAt":1000,"until":3000,"stop":"HORIZON","jobs":[{"jobId":"a","kind":"ESTIMATED","at":2000,"basis":["MAX_RUNTIME"],"estimatedAt":1000}]}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, b, c.want)
		}
	}
}

// Ensure GET /sharq/v1/shares answers the walkthrough's standing in the
// bytes it always did: QS1 runs one job on its own instance and one on
// QS2's (QS3 reserves its own), and a third waits.
func TestSharesWire(t *testing.T) {
	s := start(t, sharqapi.Options{})
	s.walkthrough()
	want := `{"queues":[{"name":"my-sm-training-qm-jq","state":"ENABLED","serviceEnvironment":"my-sm-training-qm-se","capacity":[{"unit":"ml.g5.xlarge","limit":3,"used":2,"own":0,"borrowed":0,"lent":0,"idle":1}],"shares":[{"name":"QS1","state":"ENABLED","strategy":"LEND_AND_BORROW","borrowLimit":200,"inSharePreemption":true,"runnable":1,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":2,"own":1,"borrowed":1,"lent":0,"idle":0,"borrowedFrom":[{"share":"QS2","count":1}]}]},{"name":"QS2","state":"ENABLED","strategy":"LEND","borrowLimit":-1,"inSharePreemption":false,"runnable":0,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":0,"own":0,"borrowed":0,"lent":1,"idle":0,"lentTo":[{"share":"QS1","count":1}]}]},{"name":"QS3","state":"ENABLED","strategy":"RESERVE","borrowLimit":-1,"inSharePreemption":false,"runnable":0,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":0,"own":0,"borrowed":0,"lent":0,"idle":1}]}]}],"jobCounts":{"RUNNABLE":1,"RUNNING":2,"SCHEDULED":0,"STARTING":0,"SUBMITTED":0}}` + "\n"
	if r := s.do("GET", "/sharq/v1/shares", ""); r.status != 200 || r.body != want {
		t.Errorf("got %d %s\nwant %s", r.status, r.body, want)
	}
}
