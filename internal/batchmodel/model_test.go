package batchmodel

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

var base = arn.NewBase("us-east-1", "123456789012")

func newModel() *Model { return New(Config{Base: base, MaxSharesPerQueue: 2, MaxCapacityLimits: 2}) }

func limits(n int) []record.CapacityLimit {
	return []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: n}}
}

// commit commits a change the model proposed, as the engine does once the
// core has taken its events.
func commit(t *testing.T, m *Model, ch Change, err error) Change {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	m.Commit(ch)
	return ch
}

func commit3[T any](t *testing.T, m *Model) func(T, Change, error) T {
	return func(r T, ch Change, err error) T {
		t.Helper()
		commit(t, m, ch, err)
		return r
	}
}

// quotaModel holds environment se, quota share policy qp, fair-share
// policy fp, job queue qq (quota shares, on se) with share QS1, and FIFO
// queue fq on environment se2.
func quotaModel(t *testing.T) *Model {
	m := newModel()
	commit3[record.ServiceEnvironment](t, m)(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(4)}))
	commit3[record.ServiceEnvironment](t, m)(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "se2", Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(4)}))
	commit3[record.ServiceEnvironment](t, m)(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "se3", Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(4)}))
	commit3[record.SchedulingPolicy](t, m)(m.CreateSchedulingPolicy(CreateSchedulingPolicyInput{Name: "qp", QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}}))
	commit3[record.SchedulingPolicy](t, m)(m.CreateSchedulingPolicy(CreateSchedulingPolicyInput{Name: "fp", FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":60}`)}))
	commit3[record.JobQueue](t, m)(m.CreateJobQueue(CreateJobQueueInput{Name: "qq", Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: base.SchedulingPolicy("qp"),
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se"}}}))
	commit3[record.JobQueue](t, m)(m.CreateJobQueue(CreateJobQueueInput{Name: "fq", Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: base.ServiceEnvironment("se2")}}}))
	commit3[record.QuotaShare](t, m)(m.CreateQuotaShare(CreateQuotaShareInput{Name: "QS1", JobQueue: "qq", CapacityLimits: limits(2),
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "RESERVE"}}))
	return m
}

func wantRefusal(t *testing.T, err error, code, msg string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v (%T), want %s %q", err, err, code, msg)
	}
	if e.Code != code || e.Message != msg {
		t.Errorf("error %s %q, want %s %q", e.Code, e.Message, code, msg)
	}
}

// TestTexts: every refusal is worded as clients read it, with its code.
func TestTexts(t *testing.T) {
	m := quotaModel(t)
	share := base.QuotaShare("qq", "QS1")
	two, negative := 2, -2
	seOrder := func(env string) []record.ServiceEnvironmentOrder {
		return []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: env}}
	}
	for _, tt := range []struct {
		name      string
		err       error
		code, msg string
	}{
		{"policy exists", err3(m.CreateSchedulingPolicy(CreateSchedulingPolicyInput{Name: "qp"})), Conflict, "Object already exists"},
		{"policy missing", err2(m.UpdateSchedulingPolicy(UpdateSchedulingPolicyInput{Arn: "nope"})), NotFound, "Scheduling policy nope does not exist"},
		{"policy type", err2(m.UpdateSchedulingPolicy(UpdateSchedulingPolicyInput{Arn: base.SchedulingPolicy("qp"), FairsharePolicy: json.RawMessage(`{}`)})),
			Invalid, "A scheduling policy's type cannot be changed"},
		{"policy in use", err2(m.DeleteSchedulingPolicy(base.SchedulingPolicy("qp"))), Conflict,
			"Scheduling policy " + base.SchedulingPolicy("qp") + " is used by job queue qq"},
		{"env exists", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(1)})),
			Conflict, "Object already exists"},
		{"env type", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "x", Type: "EC2", CapacityLimits: limits(1)})),
			Invalid, "serviceEnvironmentType must be SAGEMAKER_TRAINING"},
		{"no limits", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "x", Type: "SAGEMAKER_TRAINING"})),
			Invalid, "A service environment requires at least one capacity limit"},
		{"too many limits", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "x", Type: "SAGEMAKER_TRAINING", CapacityLimits: []record.CapacityLimit{
			{CapacityUnit: "ml.g5.xlarge"}, {CapacityUnit: "ml.g5.2xlarge"}, {CapacityUnit: "ml.g5.4xlarge"}}})),
			Invalid, "A service environment supports at most 2 capacity limits"},
		{"unit", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "x", Type: "SAGEMAKER_TRAINING", CapacityLimits: []record.CapacityLimit{{CapacityUnit: "m5.large"}}})),
			Invalid, `capacityUnit "m5.large" is not a SageMaker Training instance type (such as ml.g5.xlarge)`},
		{"unit twice", err3(m.CreateServiceEnvironment(CreateServiceEnvironmentInput{Name: "x", Type: "SAGEMAKER_TRAINING", CapacityLimits: append(limits(1), limits(1)...)})),
			Invalid, "capacityUnit ml.g5.xlarge is listed more than once"},
		{"negative", err3(m.UpdateServiceEnvironment(UpdateServiceEnvironmentInput{ServiceEnvironment: "se", CapacityLimits: limits(-1)})),
			Invalid, "maxCapacity must be at least 0"},
		{"env missing", err3(m.UpdateServiceEnvironment(UpdateServiceEnvironmentInput{ServiceEnvironment: "nope"})), NotFound, "Service environment nope does not exist"},
		{"env foreign ARN", err2(m.DeleteServiceEnvironment(arn.NewBase("eu-west-1", "123456789012").ServiceEnvironment("se"))), NotFound,
			"Service environment " + arn.NewBase("eu-west-1", "123456789012").ServiceEnvironment("se") + " does not exist"},
		{"env enabled", err2(m.DeleteServiceEnvironment("se")), Conflict, "Service environment se must be DISABLED before it is deleted"},
		{"queue exists", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "qq", Type: "SAGEMAKER_TRAINING"})), Conflict, "Object already exists"},
		{"queue type", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "EC2"})), Invalid,
			"jobQueueType must be SAGEMAKER_TRAINING: this server runs service jobs only"},
		{"compute envs", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", ComputeEnvironmentOrder: []json.RawMessage{[]byte(`{}`)}})),
			Invalid, "A SAGEMAKER_TRAINING job queue cannot have compute environments"},
		{"queue policy missing", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: "nope"})),
			NotFound, "Scheduling policy nope does not exist"},
		{"two envs", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", ServiceEnvironmentOrder: append(seOrder("se2"), seOrder("se3")...)})),
			Invalid, "A SAGEMAKER_TRAINING job queue requires exactly one service environment in serviceEnvironmentOrder"},
		{"queue env missing", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", ServiceEnvironmentOrder: seOrder("nope")})),
			NotFound, "Service environment nope does not exist"},
		{"quota env taken", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", ServiceEnvironmentOrder: seOrder("se")})),
			Conflict, "Service environment se is already connected to job queue qq; a quota management service environment can be connected to only one job queue"},
		{"fair env shared", err3(m.CreateJobQueue(CreateJobQueueInput{Name: "x", Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: base.SchedulingPolicy("fp"), ServiceEnvironmentOrder: seOrder("se2")})),
			Conflict, "Service environment se2 is already connected to job queue fq; a service environment of a fair-share job queue can be connected to only one job queue"},
		{"policy swap", err3(m.UpdateJobQueue(UpdateJobQueueInput{JobQueue: "fq", SchedulingPolicyArn: base.SchedulingPolicy("fp")})),
			Invalid, "A job queue's scheduling policy can be replaced only by one of the same type, and none can be added to a FIFO job queue"},
		{"queue missing", err3(m.UpdateJobQueue(UpdateJobQueueInput{JobQueue: "nope"})), NotFound, "Job queue nope does not exist"},
		{"queue enabled", err2(m.DeleteJobQueue("qq")), Conflict, "Job queue qq must be DISABLED before it is deleted"},
		{"not quota", err3(m.CreateQuotaShare(CreateQuotaShareInput{Name: "s", JobQueue: "fq"})), Invalid,
			"Job queue fq is not quota management enabled: its scheduling policy has no quotaSharePolicy"},
		{"share exists", err3(m.CreateQuotaShare(CreateQuotaShareInput{Name: "QS1", JobQueue: "qq"})), Conflict, "Quota share QS1 already exists"},
		{"share zero", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, CapacityLimits: limits(0)})), Invalid, "maxCapacity must be at least 1"},
		{"share unit", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.p4d.24xlarge", MaxCapacity: 1}}})),
			Invalid, "capacityUnit ml.p4d.24xlarge is not among the capacity limits of service environment se"},
		{"share no limits", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, CapacityLimits: []record.CapacityLimit{}})),
			Invalid, "A quota share requires at least one capacity limit"},
		{"borrow strategy", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, ResourceSharingConfiguration: &record.ResourceSharingConfiguration{Strategy: "LEND", BorrowLimit: &two}})),
			Invalid, "borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW"},
		{"borrow range", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, ResourceSharingConfiguration: &record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: &negative}})),
			Invalid, "borrowLimit must be -1 (unlimited) or more"},
		{"strategy", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: share, ResourceSharingConfiguration: &record.ResourceSharingConfiguration{Strategy: "SHARE"}})),
			Invalid, `unknown resource sharing strategy "SHARE"`},
		{"share missing", err3(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: base.QuotaShare("qq", "QS9")})), NotFound,
			"Quota share " + base.QuotaShare("qq", "QS9") + " does not exist"},
		{"share enabled", err2(m.DeleteQuotaShare(share)), Conflict, "Quota share QS1 must be DISABLED before it is deleted"},
		{"min runtime", err3(m.SetQuotaShareMinimumRuntime(share, MaxMinimumRuntimeSeconds+1)), Invalid,
			fmt.Sprintf("minimum runtime %d s is outside 0-%d", MaxMinimumRuntimeSeconds+1, MaxMinimumRuntimeSeconds)},
		{"submit no share", m.Accepts(m.QueueNamed("qq"), "", ""), Invalid, "quotaShareName must be specified: job queue qq has a quota share scheduling policy"},
		{"submit share", m.Accepts(m.QueueNamed("fq"), "QS1", ""), Invalid, "quotaShareName must not be specified: job queue fq does not have a quota share scheduling policy"},
		{"submit identifier", m.Accepts(m.QueueNamed("fq"), "", "a"), Invalid, "shareIdentifier must not be specified: job queue fq does not have a fair share scheduling policy"},
		{"submit unknown share", m.Accepts(m.QueueNamed("qq"), "QS9", ""), NotFound, "Quota share QS9 does not exist in job queue qq"},
	} {
		t.Run(tt.name, func(t *testing.T) { wantRefusal(t, tt.err, tt.code, tt.msg) })
	}

	// A share that the queue's limit leaves no room for, and one that is
	// disabled.
	commit3[record.QuotaShare](t, m)(m.CreateQuotaShare(CreateQuotaShareInput{Name: "QS2", JobQueue: "qq", CapacityLimits: limits(1),
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "RESERVE"}, State: Disabled}))
	_, _, err := m.CreateQuotaShare(CreateQuotaShareInput{Name: "QS3", JobQueue: "qq"})
	wantRefusal(t, err, Invalid, "Job queue qq already has the maximum of 2 quota shares")
	wantRefusal(t, m.Accepts(m.QueueNamed("qq"), "QS2", ""), Invalid, "Quota share QS2 is DISABLED and does not accept jobs")
	commit3[record.JobQueue](t, m)(m.UpdateJobQueue(UpdateJobQueueInput{JobQueue: "fq", State: Disabled}))
	wantRefusal(t, m.Accepts(m.QueueNamed("fq"), "", ""), Invalid, "Job queue fq is DISABLED and does not accept jobs")
	wantRefusal(t, err2(m.DeleteServiceEnvironment("se2")), Conflict, "Service environment se2 must be DISABLED before it is deleted")
	commit3[record.ServiceEnvironment](t, m)(m.UpdateServiceEnvironment(UpdateServiceEnvironmentInput{ServiceEnvironment: "se2", State: Disabled}))
	wantRefusal(t, err2(m.DeleteServiceEnvironment("se2")), Conflict, "Service environment se2 is still associated with job queue fq")
	if err := m.Accepts(m.QueueNamed("qq"), "QS1", ""); err != nil {
		t.Errorf("a job of an enabled share: %v", err)
	}
	_, _, err = m.ListQuotaShares("nope", Page{})
	wantRefusal(t, err, NotFound, "Job queue nope does not exist")
}

func err2(_ Change, err error) error             { return err }
func err3[T any](_ T, _ Change, err error) error { return err }

// TestFairShareSubmission: a fair-share queue takes only jobs with a share
// identifier.
func TestFairShareSubmission(t *testing.T) {
	m := quotaModel(t)
	commit3[record.JobQueue](t, m)(m.CreateJobQueue(CreateJobQueueInput{Name: "fair", Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: base.SchedulingPolicy("fp"),
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se3"}}}))
	q := m.QueueNamed("fair")
	wantRefusal(t, m.Accepts(q, "", ""), Invalid, "shareIdentifier must be specified: job queue fair has a fair share scheduling policy")
	if err := m.Accepts(q, "", "a"); err != nil {
		t.Errorf("a job with an identifier: %v", err)
	}
	if f := m.Fair(q); f == nil || f.DecaySeconds != 60 {
		t.Errorf("fair share = %+v, want decay 60 s", f)
	}
}

// TestQueueRecord: a new queue is healthy as AWS words it, on the
// environment's ARN, and its change carries the core's event and the
// record to store; nothing is in the model until Commit.
func TestQueueRecord(t *testing.T) {
	m := quotaModel(t)
	q, ch, err := m.CreateJobQueue(CreateJobQueueInput{Name: "new", Type: "SAGEMAKER_TRAINING", Priority: 3,
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if q.StatusReason != "JobQueue Healthy" || q.Status != "VALID" || q.State != Enabled || q.JobQueueArn != base.JobQueue("new") ||
		q.ServiceEnvironmentOrder[0].ServiceEnvironment != base.ServiceEnvironment("se3") || q.Tags == nil || q.ComputeEnvironmentOrder == nil {
		t.Errorf("queue = %+v", q)
	}
	want := []core.Event{core.PutQueue{Name: "new", Env: "se3", Priority: 3}}
	if !reflect.DeepEqual(ch.Events, want) {
		t.Errorf("events = %#v, want %#v", ch.Events, want)
	}
	if len(ch.Puts) != 1 || ch.Puts[0].Kind != KindQueue || ch.Puts[0].ARN != q.JobQueueArn {
		t.Errorf("puts = %+v", ch.Puts)
	}
	if m.QueueNamed("new") != nil {
		t.Fatal("the queue is in the model before Commit")
	}
	m.Commit(ch)
	if got, err := m.Queue(base.JobQueue("new")); err != nil || got.EnvName() != "se3" {
		t.Fatalf("queue by ARN = %v, %v", got, err)
	}
}

// TestDeleteQueueChange: deleting a queue deletes its shares' records too.
func TestDeleteQueueChange(t *testing.T) {
	m := quotaModel(t)
	commit3[record.JobQueue](t, m)(m.UpdateJobQueue(UpdateJobQueueInput{JobQueue: "qq", State: Disabled}))
	ch, err := m.DeleteJobQueue("qq")
	commit(t, m, ch, err)
	if want := []string{base.QuotaShare("qq", "QS1"), base.JobQueue("qq")}; !slices.Equal(ch.Deleted, want) {
		t.Errorf("deleted = %v, want %v", ch.Deleted, want)
	}
	if !reflect.DeepEqual(ch.Events, []core.Event{core.DeleteQueue{Name: "qq"}}) {
		t.Errorf("events = %#v", ch.Events)
	}
	if m.QueueNamed("qq") != nil {
		t.Error("the queue is still there")
	}
}

// TestFairPolicyUpdate: a changed fair-share policy is put to the core for
// every queue that uses it, with the events that put the old one back.
func TestFairPolicyUpdate(t *testing.T) {
	m := quotaModel(t)
	commit3[record.JobQueue](t, m)(m.CreateJobQueue(CreateJobQueueInput{Name: "fair", Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: base.SchedulingPolicy("fp"),
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se3"}}}))
	ch, err := m.UpdateSchedulingPolicy(UpdateSchedulingPolicyInput{Arn: base.SchedulingPolicy("fp"), FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":120}`)})
	if err != nil {
		t.Fatal(err)
	}
	fair := func(evs []core.Event) int {
		if len(evs) != 1 {
			t.Fatalf("events = %#v, want one", evs)
		}
		return evs[0].(core.PutQueue).Fair.DecaySeconds
	}
	if fair(ch.Events) != 120 || fair(ch.Undo) != 60 {
		t.Errorf("events %#v, undo %#v", ch.Events, ch.Undo)
	}
	if m.Fair(m.QueueNamed("fair")).DecaySeconds != 60 {
		t.Error("the policy changed before Commit")
	}
	m.Commit(ch)
	if m.Fair(m.QueueNamed("fair")).DecaySeconds != 120 {
		t.Error("the policy did not change at Commit")
	}
}

// TestPagination: listings are sorted, pages follow the token, and a page
// holds at most 100.
func TestPagination(t *testing.T) {
	m := newModel()
	for i := range 105 {
		commit3[record.SchedulingPolicy](t, m)(m.CreateSchedulingPolicy(CreateSchedulingPolicyInput{Name: fmt.Sprintf("p%03d", i)}))
	}
	var names []string
	p := Page{MaxResults: 40}
	for range 3 {
		page, next := m.ListSchedulingPolicies(p)
		for _, x := range page {
			names = append(names, x.Name)
		}
		if next == "" {
			break
		}
		p.NextToken = next
	}
	if len(names) != 105 || !slices.IsSorted(names) {
		t.Errorf("pages of 40 gave %d names, sorted %v", len(names), slices.IsSorted(names))
	}
	page, next := m.ListSchedulingPolicies(Page{})
	if len(page) != 100 || next != base.SchedulingPolicy("p099") {
		t.Errorf("default page: %d items, next %q", len(page), next)
	}
	page, next = m.ListSchedulingPolicies(Page{MaxResults: 1000, NextToken: next})
	if len(page) != 5 || next != "" || page[0].Name != "p100" {
		t.Errorf("last page: %d items from %s, next %q", len(page), page[0].Name, next)
	}

	m = quotaModel(t)
	envs, next := m.DescribeServiceEnvironments(nil, Page{MaxResults: 2})
	if len(envs) != 2 || envs[0].ServiceEnvironmentName != "se" || next != "se2" {
		t.Errorf("environments: %+v, next %q", envs, next)
	}
	envs, next = m.DescribeServiceEnvironments(nil, Page{NextToken: next})
	if len(envs) != 1 || envs[0].ServiceEnvironmentName != "se3" || next != "" {
		t.Errorf("environments after se2: %+v, next %q", envs, next)
	}
	qs, _ := m.DescribeJobQueues([]string{base.JobQueue("qq"), "nope", "fq"}, Page{})
	if len(qs) != 2 || qs[0].JobQueueName != "qq" || qs[1].JobQueueName != "fq" {
		t.Errorf("queues named: %+v", qs)
	}
	shares, next, err := m.ListQuotaShares("qq", Page{})
	if err != nil || len(shares) != 1 || next != "" {
		t.Errorf("shares: %+v, %q, %v", shares, next, err)
	}
}

// TestTags: tags change by a new record, within AWS's limit of 50.
func TestTags(t *testing.T) {
	m := quotaModel(t)
	qa := base.JobQueue("qq")
	ch, ok, err := m.TagResource(qa, map[string]string{"a": "1"})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	before, _ := m.Tags(qa)
	m.Commit(ch)
	if after, _ := m.Tags(qa); after["a"] != "1" || len(before) != 0 {
		t.Errorf("tags before %v, after %v", before, after)
	}
	many := map[string]string{}
	for i := range 50 {
		many[fmt.Sprint(i)] = ""
	}
	_, _, err = m.TagResource(qa, many)
	wantRefusal(t, err, Invalid, "A resource can have at most 50 tags")
	if _, ok, _ := m.TagResource(base.ServiceJob("x"), nil); ok {
		t.Error("a job ARN names a resource of the model")
	}
	ch, ok = m.UntagResource(base.QuotaShare("qq", "QS1"), []string{"x"})
	if !ok || len(ch.Puts) != 1 || ch.Puts[0].Kind != KindShare {
		t.Errorf("untag a share: %v %+v", ok, ch)
	}
}

// TestLoad: stored resources come back in order, queues and shares
// enabled until DisabledEvents; a misspelt statusReason is mended and a
// fair-share queue stored beside another stays FIFO.
func TestLoad(t *testing.T) {
	m := quotaModel(t)
	commit3[record.QuotaShare](t, m)(m.UpdateQuotaShare(UpdateQuotaShareInput{QuotaShareArn: base.QuotaShare("qq", "QS1"), State: Disabled}))
	var rs []store.Resource
	put := func(kind, a string, r record.Record) {
		rs = append(rs, store.Resource{Kind: kind, ARN: a, Doc: record.Encode(r)})
	}
	for _, q := range m.Queues() { // queues before what they refer to: Load orders them
		doc := q.JobQueue
		if q.JobQueueName == "qq" {
			doc.StatusReason = "record.JobQueue Healthy"
		}
		put(KindQueue, q.JobQueueArn, &doc)
		for _, n := range q.ShareNames() {
			put(KindShare, q.Share(n).QuotaShareArn, &q.Share(n).QuotaShare)
		}
	}
	for _, n := range m.EnvNames() {
		put(KindEnv, m.envs[n].ServiceEnvironmentArn, &m.envs[n].ServiceEnvironment)
	}
	for _, p := range m.policies {
		put(KindPolicy, p.Arn, &p.SchedulingPolicy)
	}
	// A fair-share queue beside fq, as stored by an older release.
	put(KindQueue, base.JobQueue("old"), &record.JobQueue{JobQueueName: "old", JobQueueArn: base.JobQueue("old"), State: Enabled,
		SchedulingPolicyArn: base.SchedulingPolicy("fp"), ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{ServiceEnvironment: base.ServiceEnvironment("se2")}}})

	l := New(Config{Base: base})
	restores, fifo, err := l.Load(rs)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range restores {
		switch ev := r.Event.(type) {
		case core.PutEnv:
			kinds = append(kinds, "env")
		case core.PutQueue:
			kinds = append(kinds, "queue")
			if ev.Name == "old" && ev.Fair != nil {
				t.Error("the old fair-share queue is restored fair")
			}
		case core.PutShare:
			kinds = append(kinds, "share")
			if ev.Disabled {
				t.Error("a share is restored disabled before its jobs")
			}
		}
	}
	if want := []string{"env", "env", "env", "queue", "queue", "queue", "share"}; !slices.Equal(kinds, want) {
		t.Errorf("restored %v, want %v", kinds, want)
	}
	if want := []FIFOQueue{{Queue: "old", Env: "se2"}}; !slices.Equal(fifo, want) {
		t.Errorf("FIFO queues %v, want %v", fifo, want)
	}
	if q := l.QueueNamed("qq"); q.StatusReason != "JobQueue Healthy" || !q.Quota() {
		t.Errorf("queue qq loaded as %+v", q)
	}
	disabled, err := l.DisabledEvents()
	if err != nil || len(disabled) != 1 || disabled[0].What != "disable quota share "+base.QuotaShare("qq", "QS1") || !disabled[0].Event.(core.PutShare).Disabled {
		t.Errorf("disabled = %+v, %v", disabled, err)
	}
	evs, err := l.CoreEvents()
	if err != nil || len(evs) != len(restores) {
		t.Errorf("core events: %d, %v; want %d", len(evs), err, len(restores))
	}
}

func TestShareIdentifiersOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{{"UserA*", "UserA-1", true}, {"UserA-1", "UserA*", true}, {"a", "a", true}, {"a", "b", false}, {"UserA*", "UserB", false}} {
		if got := ShareIdentifiersOverlap(tt.a, tt.b); got != tt.want {
			t.Errorf("ShareIdentifiersOverlap(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}
