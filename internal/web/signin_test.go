package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/web"
)

// TestConsoleSignIn drives the console in headless Chromium against a
// server that checks signatures: the page asks for an access key, signs
// its stream (a presigned URL) and its writes with it, a write the key's
// policy does not allow is refused with AWS's message, and signing out
// asks again.
func TestConsoleSignIn(t *testing.T) {
	keys := &accesstest.Keys{}
	ring, err := access.NewKeyring(keys, make([]byte, access.ServerKeySize), acct)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(access.PolicyDocument{Statement: []access.Statement{
		{Effect: "Allow", Action: []string{"batch:UpdateServiceJob", "batch:TerminateServiceJob", "batch:SubmitServiceJob"},
			Resource: []string{"arn:aws:batch:*:*:job-queue/" + queue + "/quota-share/QS1", "arn:aws:batch:*:*:service-job/*"}},
		{Effect: "Allow", Action: []string{"sharq:Get*", "batch:Describe*"}, Resource: []string{"*"}},
	}})
	keys.PutPolicy(t.Context(), access.Policy{Name: "team-a", Document: doc})
	k, err := ring.Create(t.Context(), "team-a", []string{"team-a"})
	if err != nil {
		t.Fatal(err)
	}
	authz := &access.PolicyAuthorizer{Keys: keys}
	s := startAuth(t, web.Options{Authorizer: authz, Region: region, AccountID: acct},
		sigv4.New(sigv4.Options{Credentials: ring, Region: region, AllowUnsigned: true}))
	authz.JobShare = func(ctx context.Context, job string) (string, error) {
		j, err := s.eng.DescribeServiceJob(ctx, job)
		if err != nil {
			return "", fmt.Errorf("%w: %v", access.ErrNotFound, err)
		}
		return j.JobQueue + "/quota-share/" + j.QuotaShareName, nil
	}
	s.setupWalkthrough()
	w := s.step1()
	s.step2(&w)
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the sign-in form", `document.querySelector('#login-id') !== null`)
	screenshot(t, ctx, "console-sign-in")
	// Every field lies within the form's card.
	for _, id := range []string{"login-id", "login-secret", "login-region"} {
		if !eval[bool](t, ctx, fmt.Sprintf(`(() => {
			const f = document.querySelector('#%s').getBoundingClientRect(), c = document.querySelector('#login').getBoundingClientRect();
			return f.left >= c.left && f.right <= c.right && f.top >= c.top && f.bottom <= c.bottom; })()`, id)) {
			t.Errorf("#%s sticks out of the sign-in card", id)
		}
	}
	eval[bool](t, ctx, fmt.Sprintf(`(() => { document.querySelector('#login-id').value = %q;
		document.querySelector('#login-secret').value = %q; return true; })()`, k.ID, k.Secret))
	do(t, ctx, "sign in", chromedp.Click(chromedp.CSS(`#login-submit`)))
	waitFor(t, ctx, "the bars, over a signed stream", `document.querySelector('.bar[data-share="QS2"] .seg.own') !== null &&
		document.querySelector('#auth') !== null`)

	// A signed write in team-a's share.
	do(t, ctx, "open qs1_job_low", chromedp.Navigate(s.url+"/jobs/"+w.low))
	setPriority(t, ctx, "4")
	waitFor(t, ctx, "the confirmation", `document.querySelector('#action-msg').textContent === 'Priority set to 4.'`)
	if j := s.wait(w.low, "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"); j.SchedulingPriority != 4 {
		t.Fatalf("server has priority %d for qs1_job_low", j.SchedulingPriority)
	}
	// One in QS2, which team-a's policy does not cover.
	do(t, ctx, "open qs2_job_1", chromedp.Navigate(s.url+"/jobs/"+w.qs2))
	setPriority(t, ctx, "7")
	waitFor(t, ctx, "the refusal", `document.querySelector('#action-msg').textContent.includes('is not authorized to perform: batch:UpdateServiceJob')`)
	if j := s.wait(w.qs2, "RUNNING"); j.SchedulingPriority != 1 {
		t.Errorf("a refused write changed qs2_job_1's priority to %d", j.SchedulingPriority)
	}
	do(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`#sign-out`)))
	waitFor(t, ctx, "the sign-in form again", `document.querySelector('#login-id') !== null`)
}

func setPriority(t *testing.T, ctx context.Context, v string) {
	t.Helper()
	waitFor(t, ctx, "the job page", `document.querySelector('#priority-input') !== null && document.querySelector('#priority-input').value !== ''`)
	eval[bool](t, ctx, `(() => { const i = document.querySelector('#priority-input'); i.value = '`+v+`';
		i.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
	do(t, ctx, "set the priority", chromedp.Click(chromedp.CSS(`#priority-set`)))
}

// TestConsoleMyJobs: signed in, "my jobs" hides the waiting and running
// jobs that another principal submitted.
func TestConsoleMyJobs(t *testing.T) {
	keys := &accesstest.Keys{}
	ring, err := access.NewKeyring(keys, make([]byte, access.ServerKeySize), acct)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ring.Create(t.Context(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := startAuth(t, web.Options{Region: region, AccountID: acct}, sigv4.New(sigv4.Options{Credentials: ring, Region: region, AllowUnsigned: true}))
	s.setupWalkthrough()
	submit := func(name, share, owner string) string {
		t.Helper()
		prio := 0
		j, err := s.eng.SubmitServiceJob(t.Context(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue, ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`, QuotaShareName: share, SchedulingPriority: &prio, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	mine := submit("mine", "QS3", "arn:aws:iam::"+acct+":user/alice")
	theirs := submit("theirs", "QS2", "arn:aws:iam::"+acct+":user/bob")
	s.wait(mine, "RUNNING")
	s.wait(theirs, "RUNNING")
	ctx := browser(t)

	// The server lets anyone read; signing in is the reader's choice.
	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	eval[bool](t, ctx, fmt.Sprintf(`(() => { sharqSigV4.signIn(%q, %q, %q); return true; })()`, k.ID, k.Secret, region))
	do(t, ctx, "load it signed in", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the my-jobs switch", `document.querySelector('#my-jobs') !== null`)
	visible := func(id string) string {
		return `(() => { const r = document.querySelector('tr[data-job="` + id + `"]'); return r !== null && !r.hidden; })()`
	}
	waitFor(t, ctx, "both running jobs", visible(mine)+` && `+visible(theirs))
	do(t, ctx, "tick my jobs", chromedp.Click(chromedp.CSS(`#my-jobs`)))
	waitFor(t, ctx, "only mine", visible(mine)+` && !`+visible(theirs))
	screenshot(t, ctx, "console-my-jobs")
	do(t, ctx, "untick my jobs", chromedp.Click(chromedp.CSS(`#my-jobs`)))
	waitFor(t, ctx, "both again", visible(mine)+` && `+visible(theirs))
}
