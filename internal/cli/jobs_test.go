package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/testwait"
)

const announcement = "../../examples/announcement.yaml"

// announcementJobs sets up the announcement's cluster and brings it to a
// state with every kind of waiting job:
//
//	1 a1  QS1  RUNNING   its own instance
//	2 a2  QS1  RUNNABLE  was borrowing QS2's instance, preempted when d1 came
//	3 a3  QS1  RUNNABLE  behind a2
//	4 a4  QS1  RUNNABLE  behind a2
//	5 c1  QS2  RUNNABLE  9 instances: more than the environment has
//	6 d1  QS2  RUNNING   took its instance back from a2
func announcementJobs(t *testing.T) *server {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	submit := func(n int, args ...string) {
		t.Helper()
		out := s.ok(Submit, args...)
		if !strings.Contains(out, jobID(n)) {
			t.Fatalf("submit %v: %q does not name job %d", args, out, n)
		}
	}
	submit(1, "--share", "QS1", "--name", "a1", "--", "train", "--epochs", "3")
	s.waitStatus(jobID(1), "RUNNING")
	submit(2, "--share", "QS1", "--name", "a2", "--", "train")
	s.waitStatus(jobID(2), "RUNNING")
	submit(3, "--share", "QS1", "--name", "a3", "--", "train")
	submit(4, "--share", "QS1", "--name", "a4", "--", "train")
	submit(5, "--share", "QS2", "--name", "c1", "--count", "9", "--", "train")
	s.waitStatus(jobID(5), "RUNNABLE")
	submit(6, "--share", "QS2", "--name", "d1", "--", "train")
	s.waitStatus(jobID(6), "RUNNING")
	s.waitStatus(jobID(2), "RUNNABLE")
	s.waitStatus(jobID(4), "RUNNABLE")
	s.waitEstimates()
	return s
}

// Ensure the tables show every job with its share, place and a reason a
// person understands, and that the JSON carries the same.
func TestJobsTables(t *testing.T) {
	s := announcementJobs(t)

	golden(t, "jobs", s.ok(Jobs))
	golden(t, "jobs_share", s.ok(Jobs, "--share", "QS2"))
	golden(t, "jobs_running", s.ok(Jobs, "--status", "running,starting"))
	golden(t, "shares", s.ok(Shares))
	golden(t, "describe_preempted", s.ok(Describe, "a2"))
	golden(t, "describe_blocked", s.ok(Describe, jobID(3)))
	golden(t, "events_job", s.ok(Events, "--job", "a2"))
	golden(t, "top", strings.ReplaceAll(s.ok(Top), s.url, "http://SERVER"))

	var rows []jobRow
	if err := json.Unmarshal([]byte(s.ok(Jobs, "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]jobRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if r := byName["a3"]; r.Place != 2 || r.WaitingReason != "blocked behind job "+jobID(2)+" in share QS1" {
		t.Errorf("a3: place %d, reason %q", r.Place, r.WaitingReason)
	}
	if r := byName["c1"]; !strings.HasPrefix(r.WaitingReason, "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE") {
		t.Errorf("c1: reason %q", r.WaitingReason)
	}
	if r := byName["a2"]; r.Preemptions != 1 || r.WaitingReason != "QS1 at its limit of 1 ml.g5.xlarge and nothing lendable: QS3's idle instance is RESERVE" {
		t.Errorf("a2: %+v", r)
	}

	var u sharqapi.Usage
	if err := json.Unmarshal([]byte(s.ok(Shares, "-o", "json")), &u); err != nil {
		t.Fatal(err)
	}
	if len(u.Queues) != 1 || len(u.Queues[0].Shares) != 3 || u.JobCounts["RUNNABLE"] != 4 {
		t.Errorf("shares JSON: %+v", u)
	}

	var d struct {
		Job      struct{ JobName, Status string }
		Position sharqapi.Position
		Events   []batchapi.Event
	}
	if err := json.Unmarshal([]byte(s.ok(Describe, "a2", "-o", "json")), &d); err != nil {
		t.Fatal(err)
	}
	if d.Job.JobName != "a2" || d.Job.Status != "RUNNABLE" || d.Position.Place != 1 || len(d.Events) == 0 {
		t.Errorf("describe JSON: %+v", d)
	}

	lines := strings.Split(strings.TrimSpace(s.ok(Events, "-o", "json")), "\n")
	if len(lines) < 6 {
		t.Fatalf("%d event lines", len(lines))
	}
	for _, l := range lines {
		var ev batchapi.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.DetailType != "Batch Service Job State Change" {
			t.Errorf("event line %q: %v", l, err)
		}
	}
}

// Ensure filters narrow the listing and bad ones are usage errors.
func TestJobsFilters(t *testing.T) {
	s := announcementJobs(t)
	var rows []jobRow
	if err := json.Unmarshal([]byte(s.ok(Jobs, "--status", "all", "--queue", "my-sm-training-qm-jq", "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Errorf("%d jobs in all statuses, want 6", len(rows))
	}
	golden(t, "jobs_none", s.ok(Jobs, "--status", "SUCCEEDED"))
	expect(t, s.run(Jobs, "--status", "DONE"), ExitUsage, `unknown status "DONE"`)
	expect(t, s.run(Jobs, "--queue", "nope"), ExitNotFound, "nope does not exist")
	expect(t, s.run(Jobs, "-o", "yaml"), ExitUsage, "-o must be table or json")
	expect(t, s.run(Jobs, "extra"), ExitUsage, "wrong number of arguments")
	expect(t, s.run(Shares, "--share", "QS9"), ExitNotFound, "no queue or share matches")
}

// Ensure priority and cancel act on jobs named by name or ID, report what
// they did, and say which job does not exist.
func TestPriorityAndCancel(t *testing.T) {
	s := announcementJobs(t)

	golden(t, "priority", s.ok(Priority, "a4", "7"))
	// a4 now outranks a1 in QS1, which preempts within its share.
	s.waitStatus(jobID(4), "RUNNING")
	s.waitStatus(jobID(1), "RUNNABLE")
	var out map[string]string
	if err := json.Unmarshal([]byte(s.ok(Priority, jobID(3), "8", "-o", "json")), &out); err != nil || out["jobId"] != jobID(3) {
		t.Errorf("priority JSON %v: %v", out, err)
	}
	expect(t, s.run(Priority, "a4", "10000"), ExitUsage, "0 to 9999")
	expect(t, s.run(Priority, "a4", "high"), ExitUsage, "must be a number")
	expect(t, s.run(Priority, "nosuch", "1"), ExitNotFound, "no job has the ID or name nosuch")

	golden(t, "cancel", s.ok(Cancel, "c1", jobID(3)))
	s.waitStatus(jobID(5), "FAILED")
	s.waitStatus(jobID(3), "FAILED")
	r := s.run(Cancel, "nosuch", "a2")
	expect(t, r, ExitNotFound, "sharq cancel: no job has the ID or name nosuch")
	if r.stdout != "cancelled a2 (00000002)\n" {
		t.Errorf("a bad job must not stop the others: stdout %q", r.stdout)
	}
	if out := s.ok(Cancel, "c1"); out != "c1 (00000005) had already ended: FAILED\n" {
		t.Errorf("cancelling an ended job: %q", out)
	}
	expect(t, s.run(Cancel), ExitUsage, "name the jobs to cancel, or give --share")
}

// TestJobsNeverRunnable: a job that can never run says in the table what the
// service environment lacks, in full: an instance type it has none of, or
// more instances than its limit.
func TestJobsNeverRunnable(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--name", "huge", "--instance-type", "ml.g9.huge", "--", "train")
	s.ok(Submit, "--share", "QS2", "--name", "fifty", "--count", "50", "--", "train")
	s.waitStatus(jobID(1), "RUNNABLE")
	s.waitStatus(jobID(2), "RUNNABLE")
	s.waitEstimates()
	golden(t, "jobs_never_runnable", s.ok(Jobs))
}

// TestJobsWhileVictimStops: while a preempted job that ignores SIGTERM gets
// its grace period, the preemptor says what its start waits for, and the
// victim's attempt that it is stopping; then that it stopped.
func TestJobsWhileVictimStops(t *testing.T) {
	s := newServer(t, true)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--name", "a1", "--", "sleep", "30")
	s.waitStatus(jobID(1), "RUNNING")
	// a2 borrows QS2's idle instance; d1 takes it back.
	s.ok(Submit, "--share", "QS1", "--name", "a2", "--env", "SHARQ_STOP_GRACE_SECONDS=2", "--", "sh", "-c", `trap "" TERM; while :; do sleep 0.05; done`)
	s.waitStatus(jobID(2), "RUNNING")
	s.ok(Submit, "--share", "QS2", "--name", "d1", "--", "sleep", "30")
	s.waitStatus(jobID(3), "SCHEDULED")
	golden(t, "jobs_victim_stopping", s.ok(Jobs, "--status", "scheduled"))
	attempt := func() string {
		j, err := s.eng.DescribeServiceJob(t.Context(), jobID(2))
		if err != nil {
			t.Fatal(err)
		}
		return j.Attempts[0].StatusReason
	}
	preempted := "Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job " + jobID(3) + ")"
	if want := preempted + "; stopping since 2025-03-04T05:06:07Z, up to 2s grace period"; attempt() != want {
		t.Errorf("a2's attempt says %q while it stops, want %q", attempt(), want)
	}
	s.waitStatus(jobID(3), "RUNNING")
	testwait.True(t, 15*time.Second, "a2's attempt stopped", func() bool { return attempt() == preempted+"; killed with SIGKILL after 2s grace period" })
}

// TestJobsOwner: with a server that checks signatures, `jobs --owner me`
// lists the jobs the caller's key submitted, `--owner NAME` another's; on a
// server that knows no one, --owner me says so.
func TestJobsOwner(t *testing.T) {
	s, ring := newKeyedServer(t)
	ctx := t.Context()
	alice, err := ring.Create(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := ring.Create(ctx, "bob", nil)
	if err != nil {
		t.Fatal(err)
	}
	as := func(k access.NewKey) {
		t.Setenv("AWS_ACCESS_KEY_ID", k.ID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", k.Secret)
	}
	as(alice)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--name", "alices", "--", "train")
	as(bob)
	s.ok(Submit, "--share", "QS2", "--name", "bobs", "--", "train")
	s.waitStatus(jobID(2), "RUNNING")
	s.waitEstimates()

	golden(t, "jobs_owner_me", s.ok(Jobs, "--owner", "me"))
	golden(t, "jobs_owner_alice", s.ok(Jobs, "--owner", "alice"))
	if out := s.ok(Jobs, "--owner", "arn:aws:iam::000000000000:user/bob"); !strings.Contains(out, "bobs") || strings.Contains(out, "alices") {
		t.Errorf("--owner ARN:\n%s", out)
	}
	// A server without access keys knows no one, and records no owners.
	open := newServer(t, false)
	expect(t, open.run(Jobs, "--owner", "me"), ExitUsage, "the server does not know who you are")
}

// Ensure describe says where a succeeded job's model went, and that the
// executor put it there.
func TestDescribeModel(t *testing.T) {
	s := newServer(t, true)
	s.ok(Apply, "-f", announcement)
	out := t.TempDir()
	payload := filepath.Join(t.TempDir(), "payload.json")
	os.WriteFile(payload, []byte(`{"OutputDataConfig":{"S3OutputPath":"file://`+out+`"},
		"AlgorithmSpecification":{"ContainerEntrypoint":["sh","-c","echo w > \"$SM_MODEL_DIR/w.txt\""]}}`), 0o644)
	s.ok(Submit, "--share", "QS1", "--name", "m1", "--payload", payload)
	s.waitStatus(jobID(1), "SUCCEEDED")
	desc := s.ok(Describe, "m1")
	_, model, ok := strings.Cut(desc, "Model:")
	model, _, _ = strings.Cut(strings.TrimSpace(model), "\n")
	if !ok || !strings.HasPrefix(model, "file://"+out+"/AWSBatchm1") || !strings.HasSuffix(model, "/output/model.tar.gz") {
		t.Fatalf("describe says no model where expected:\n%s", desc)
	}
	if _, err := os.Stat(strings.TrimPrefix(model, "file://")); err != nil {
		t.Errorf("the model is not where describe says: %v", err)
	}
}
