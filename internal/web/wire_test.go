package web_test

import (
	"encoding/json"
	"testing"

	"github.com/sharq-dev/sharq/internal/web"
)

// TestStateShape pins the JSON of the console's state, field names and
// order, as its scripts read it.
func TestStateShape(t *testing.T) {
	units := []web.Unit{{Unit: "u", Limit: 4, Used: 3, Own: 1, Borrowed: 2, Lent: 1, Idle: 1,
		BorrowedFrom: []web.ShareCount{{Share: "QS2", Count: 2, Reclaimable: true}}}}
	st := web.State{Counts: map[string]int{"RUNNING": 1}, Errors: []string{"e"}, Queues: []web.Queue{{
		Name: "q", State: "ENABLED", Quota: true, Environments: []web.Env{{Name: "se", Units: units}},
		Shares: []web.Share{
			{ShareStanding: web.ShareStanding{Name: "QS1", State: "ENABLED", Strategy: "STRICT", BorrowLimit: -1, InSharePreemption: true,
				MinimumRuntimeSeconds: 60, Runnable: 1, Units: units}, FrontPartial: true, Warnings: []string{"w"}, Front: []web.JobLine{{ID: "a", Name: "n", Share: "QS1",
				Status: "RUNNABLE", Priority: 2, Owner: "o", Position: 1, Reason: "r", Misconfigured: true, Preemptions: 1, CreatedAt: 5,
				ETA: &web.StartEstimate{Kind: "ESTIMATED", At: 9, Basis: []string{"HISTORY"}}}}},
			{ShareStanding: web.ShareStanding{Name: "", State: "ENABLED", Units: []web.Unit{}}, Front: []web.JobLine{}},
		},
		Dispatched: []web.JobLine{{ID: "b", Name: "m", Status: "RUNNING", CreatedAt: 5, StartedAt: 6,
			Holding: &web.Holding{Own: []web.Instances{{Unit: "u", Count: 1}}, Borrowed: []web.Loan{{Unit: "u", Count: 1, Lender: "QS2"}}}}},
	}}}
	want := `{"queues":[{"name":"q","state":"ENABLED","environments":[{"name":"se","units":[{"unit":"u","limit":4,"used":3,"own":1,"borrowed":2,"lent":1,"idle":1,"borrowedFrom":[{"share":"QS2","count":2,"reclaimable":true}]}]}],"quota":true,` +
		`"shares":[{"name":"QS1","state":"ENABLED","strategy":"STRICT","borrowLimit":-1,"inSharePreemption":true,"minimumRuntimeSeconds":60,"runnable":1,"units":[{"unit":"u","limit":4,"used":3,"own":1,"borrowed":2,"lent":1,"idle":1,"borrowedFrom":[{"share":"QS2","count":2,"reclaimable":true}]}],` +
		`"front":[{"id":"a","name":"n","share":"QS1","status":"RUNNABLE","priority":2,"owner":"o","position":1,"reason":"r","misconfigured":true,"preemptions":1,"createdAt":5,"eta":{"kind":"ESTIMATED","at":9,"basis":["HISTORY"]}}],"frontPartial":true,"warnings":["w"]},` +
		`{"name":"","state":"ENABLED","strategy":"","borrowLimit":0,"inSharePreemption":false,"runnable":0,"units":[],"front":[]}],` +
		`"dispatched":[{"id":"b","name":"m","status":"RUNNING","priority":0,"holding":{"own":[{"unit":"u","count":1}],"borrowed":[{"unit":"u","count":1,"lender":"QS2","reclaimable":false}]},"createdAt":5,"startedAt":6}]}],` +
		`"counts":{"RUNNING":1},"errors":["e"]}`
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("state:\n got %s\nwant %s", b, want)
	}
}

// Ensure the console's state of the walkthrough's set-up, before any job,
// is answered in the bytes it always was.
func TestStateWire(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	r := s.srv.Do(t, "GET", "/sharq/v1/console/state", "")
	want := `{"queues":[{"name":"my-sm-training-qm-jq","state":"ENABLED","environments":[{"name":"my-sm-training-qm-se","units":[{"unit":"ml.g5.xlarge","limit":3,"used":0,"own":0,"borrowed":0,"lent":0,"idle":3}]}],"quota":true,"shares":[{"name":"QS1","state":"ENABLED","strategy":"LEND_AND_BORROW","borrowLimit":200,"inSharePreemption":true,"runnable":0,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":0,"own":0,"borrowed":0,"lent":0,"idle":1}],"front":[]},{"name":"QS2","state":"ENABLED","strategy":"LEND","borrowLimit":-1,"inSharePreemption":false,"runnable":0,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":0,"own":0,"borrowed":0,"lent":0,"idle":1}],"front":[]},{"name":"QS3","state":"ENABLED","strategy":"RESERVE","borrowLimit":-1,"inSharePreemption":false,"runnable":0,"units":[{"unit":"ml.g5.xlarge","limit":1,"used":0,"own":0,"borrowed":0,"lent":0,"idle":1}],"front":[]}],"dispatched":[]}],"counts":{}}` + "\n"
	if r.Status != 200 || r.Body != want {
		t.Errorf("got %d %s\nwant %s", r.Status, r.Body, want)
	}
}
