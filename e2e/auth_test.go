package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/smithy-go"
	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// key is an access key made with sharq admin keys create.
type key struct {
	ID     string `json:"accessKeyId"`
	Secret string `json:"secretAccessKey"`
}

func (k key) env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + k.ID, "AWS_SECRET_ACCESS_KEY=" + k.Secret}
}

func createKey(t *testing.T, dataDir, name string, policies ...string) key {
	t.Helper()
	args := []string{"admin", "keys", "create", "--data-dir", dataDir, "--name", name, "-o", "json"}
	for _, p := range policies {
		args = append(args, "--policy", p)
	}
	out, err := exec.Command(sharqBin, args...).Output()
	var k key
	if err == nil {
		err = json.Unmarshal(out, &k)
	}
	if err != nil || k.ID == "" || k.Secret == "" {
		t.Fatalf("sharq %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return k
}

func (s *server) clientWith(k key) *batch.Client {
	c := s.client()
	return batch.New(c.Options(), func(o *batch.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider(k.ID, k.Secret, "")
	})
}

// accessPolicies lets team-a and team-b each submit, update and terminate
// in its own share and read everything.
const accessPolicies = `
accessPolicies:
  - name: team-a
    statements:
      - effect: Allow
        actions: [batch:SubmitServiceJob, batch:UpdateServiceJob, batch:TerminateServiceJob]
        resources: ["arn:aws:batch:*:*:job-queue/my-sm-training-qm-jq/quota-share/QS1", "arn:aws:batch:*:*:service-job/*"]
      - {effect: Allow, actions: ["batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"], resources: ["*"]}
  - name: team-b
    statements:
      - effect: Allow
        actions: [batch:SubmitServiceJob, batch:UpdateServiceJob, batch:TerminateServiceJob]
        resources: ["arn:aws:batch:*:*:job-queue/my-sm-training-qm-jq/quota-share/QS2", "arn:aws:batch:*:*:service-job/*"]
      - {effect: Allow, actions: ["batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"], resources: ["*"]}
`

// runSharq runs the sharq CLI against s with the given key.
func runSharq(t *testing.T, s *server, k key, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), sharqBin, append(args, "--endpoint", s.url)...)
	cmd.Env = append(os.Environ(), append(k.env(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_REGION=us-east-1", "AWS_SESSION_TOKEN=", "AWS_PROFILE=")...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Ensure, against the real binary with --auth sigv4: the admin's key sets
// up the walkthrough and applies the policies with the sharq CLI; each
// team's key submits, updates and terminates in its own share and is
// refused, with AWS's codes, in the other's; unsigned, unknown-key,
// expired and tampered requests are refused and change nothing; presigned
// URLs work; the sharq CLI signs its own routes.
func TestAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := createKey(t, dir, "admin", "AdministratorAccess")
	s := startServer(t, serverOptions{dataDir: dir, args: []string{"--auth", "sigv4"}})
	ac := s.clientWith(admin)
	setUpWalkthrough(t, ac, 3)
	cluster := filepath.Join(dir, "cluster.yaml")
	os.WriteFile(cluster, []byte(accessPolicies), 0o644)
	if out, err := runSharq(t, s, admin, "apply", "-f", cluster); err != nil || !strings.Contains(out, "applied 2 changes") {
		t.Fatalf("sharq apply of the policies: %v\n%s", err, out)
	}
	// The teams' keys, once their policies exist, beside the server.
	teamA := createKey(t, dir, "team-a", "team-a")
	teamB := createKey(t, dir, "team-b", "team-b")
	a, b := s.clientWith(teamA), s.clientWith(teamB)
	if out, err := runSharq(t, s, teamA, "apply", "-f", cluster); err == nil || !strings.Contains(out, "not authorized to perform: sharq:ListAccessPolicies") {
		t.Errorf("team-a's sharq apply: %v\n%s", err, out)
	}

	jobA := submit(t, a, jobSpec{name: "a1", share: "QS1", priority: 1})
	jobB := submit(t, b, jobSpec{name: "b1", share: "QS2", priority: 1})
	_, err := a.SubmitServiceJob(ctx(t), submitInput(jobSpec{name: "a2", share: "QS2", priority: 1}))
	wantCode(t, "team-a submits to QS2", err, "AccessDeniedException")
	_, err = a.UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(jobB), SchedulingPriority: aws.Int32(9)})
	wantCode(t, "team-a updates team-b's job", err, "AccessDeniedException")
	_, err = a.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(jobB), Reason: aws.String("x")})
	wantCode(t, "team-a terminates team-b's job", err, "AccessDeniedException")
	_, err = a.UpdateQuotaShare(ctx(t), &batch.UpdateQuotaShareInput{QuotaShareArn: aws.String(shareArn("QS1")),
		CapacityLimits: nil, State: "DISABLED"})
	wantCode(t, "team-a changes its share", err, "AccessDeniedException")
	_, err = a.UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(jobA), SchedulingPriority: aws.Int32(5)})
	fatalIf(t, "team-a updates its own job", err)
	_, err = s.clientWith(key{ID: "SKIANOSUCHKEY0000000", Secret: "x"}).ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName)})
	wantCode(t, "an unknown key", err, "UnrecognizedClientException")
	_, err = s.clientWith(key{ID: teamA.ID, Secret: "wrong"}).ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName)})
	wantCode(t, "a wrong secret", err, "InvalidSignatureException")
	anon := batch.New(ac.Options(), func(o *batch.Options) { o.Credentials = aws.AnonymousCredentials{} })
	_, err = anon.SubmitServiceJob(ctx(t), submitInput(jobSpec{name: "anon", share: "QS1", priority: 1}))
	wantCode(t, "an unsigned submission", err, "MissingAuthenticationTokenException")

	// Raw requests: signed 20 minutes ago; replayed with another body.
	body := `{"jobName":"raw","jobQueue":"` + queueName + `","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":` +
		string(mustJSON(payload(1, nil))) + `}`
	if code, typ := rawSubmit(t, s, teamA, body, body, time.Now().Add(-20*time.Minute)); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("a submission signed 20 minutes ago: %d %s", code, typ)
	}
	tampered := strings.Replace(body, `"QS1"`, `"QS2"`, 1)
	if code, typ := rawSubmit(t, s, teamA, body, tampered, time.Now()); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("a submission replayed with another body: %d %s", code, typ)
	}
	if code, typ := rawSubmit(t, s, teamA, body, body, time.Now()); code != 200 {
		t.Errorf("the raw submission itself: %d %s", code, typ)
	}
	var names []string
	for _, st := range []types.ServiceJobStatus{"SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"} {
		list, err := ac.ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName), JobStatus: st})
		fatalIf(t, "list", err)
		for _, j := range list.JobSummaryList {
			names = append(names, aws.ToString(j.JobName))
		}
	}
	if slices.Sort(names); !slices.Equal(names, []string{"a1", "b1", "raw"}) {
		t.Errorf("jobs %v, want a1, b1 and raw only", names)
	}
	if d := describe(t, ac, jobB); aws.ToInt32(d.SchedulingPriority) != 1 || d.Status == "SUCCEEDED" || d.Status == "FAILED" {
		t.Errorf("team-b's job changed: %s", js(d))
	}

	// A presigned URL for one of sharq's routes.
	req, _ := http.NewRequest("GET", s.url+"/sharq/v1/shares?X-Amz-Expires=60", nil)
	u, _, err := v4.NewSigner().PresignHTTP(ctx(t), aws.Credentials{AccessKeyID: teamA.ID, SecretAccessKey: teamA.Secret},
		req, sha256Hex(""), "batch", region, time.Now())
	fatalIf(t, "presign", err)
	if resp, err := http.Get(u); err != nil || resp.StatusCode != 200 {
		t.Errorf("presigned GET /sharq/v1/shares: %v %v", resp, err)
	}

	// The sharq CLI signs its own routes as well as the API's.
	// It shows who submitted each job.
	out, err := runSharq(t, s, teamA, "jobs")
	owners := map[string]string{}
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 3 {
			owners[f[0]] = f[3]
		}
	}
	if err != nil || owners["NAME"] != "OWNER" || owners["a1"] != "team-a" || owners["b1"] != "team-b" {
		t.Errorf("team-a's sharq jobs: %v\n%s", err, out)
	}
	if out, err := runSharq(t, s, teamA, "cancel", jobB); err == nil || !strings.Contains(out, "not authorized") {
		t.Errorf("team-a's sharq cancel of team-b's job: %v\n%s", err, out)
	}
	if out, err := runSharq(t, s, teamB, "cancel", jobB); err != nil {
		t.Errorf("team-b's sharq cancel of its job: %v\n%s", err, out)
	}
	checkOtherClients(t, s, teamA)
	checkAudit(t, s, admin, teamA)
	s.stop()
}

// checkAudit reads the audit log with the admin's key: it holds team-a's
// refused and allowed writes and the unsigned one; team-a may not read it.
func checkAudit(t *testing.T, s *server, admin, teamA key) {
	t.Helper()
	want := []string{
		"team-a batch:SubmitServiceJob " + shareArn("QS2") + " AccessDeniedException",
		"team-a batch:SubmitServiceJob " + shareArn("QS1") + " OK",
		"team-a batch:UpdateQuotaShare " + shareArn("QS1") + " AccessDeniedException",
		"anonymous batch:SubmitServiceJob " + shareArn("QS1") + " MissingAuthenticationTokenException",
		"unauthenticated POST /v1/submitservicejob * InvalidSignatureException",
		"team-b batch:TerminateServiceJob arn:aws:batch:us-east-1:000000000000:service-job/",
	}
	testwait.Until(t, 10*time.Second, func() error {
		out, err := runSharq(t, s, admin, "events", "--audit", "-o", "json")
		if err != nil {
			return fmt.Errorf("sharq events --audit: %v\n%s", err, out)
		}
		var lines []string
		for line := range strings.Lines(out) {
			var e struct{ Key, Operation, Resource, Result, RequestID string }
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.RequestID == "" {
				return fmt.Errorf("audit line %q: %v", line, err)
			}
			lines = append(lines, e.Key+" "+e.Operation+" "+e.Resource+" "+e.Result)
		}
		if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "listservicejobs") }) {
			return fmt.Errorf("a refused read is in the audit log:\n%s", strings.Join(lines, "\n"))
		}
		for _, w := range want {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
				return fmt.Errorf("no audit entry %q in:\n%s", w, strings.Join(lines, "\n"))
			}
		}
		return nil
	})
	if out, err := runSharq(t, s, teamA, "events", "--audit"); err == nil || !strings.Contains(out, "sharq:ReadAuditLog") {
		t.Errorf("team-a read the audit log: %v\n%s", err, out)
	}
}

// checkOtherClients checks the AWS CLI's and boto3's answers to team-a.
func checkOtherClients(t *testing.T, s *server, teamA key) {
	t.Helper()
	for _, tool := range []string{"aws", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): TestAuth drives the server with the AWS CLI and boto3", tool, err)
		}
	}
	cli := func(k key, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx(t), "aws", append([]string{"batch", "--endpoint-url", s.url, "--region", region}, args...)...)
		cmd.Env = append(os.Environ(), append(k.env(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
			"AWS_PAGER=", "AWS_MAX_ATTEMPTS=1", "AWS_SESSION_TOKEN=")...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	sub := func(share string) []string {
		return []string{"submit-service-job", "--job-name", "cli-" + share, "--job-queue", queueName, "--service-job-type", "SAGEMAKER_TRAINING",
			"--quota-share-name", share, "--service-request-payload", payload(1, nil)}
	}
	if out, err := cli(teamA, sub("QS1")...); err != nil {
		t.Errorf("aws batch submit-service-job to QS1 with team-a's key: %v\n%s", err, out)
	}
	if out, err := cli(teamA, sub("QS2")...); err == nil || !strings.Contains(out, "AccessDeniedException") {
		t.Errorf("aws batch submit-service-job to QS2 with team-a's key: %v\n%s", err, out)
	}
	if out, err := cli(key{ID: "SKIANOSUCHKEY0000000", Secret: "x"}, "list-service-jobs", "--job-queue", queueName); err == nil ||
		!strings.Contains(out, "UnrecognizedClientException") {
		t.Errorf("aws batch with an unknown key: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx(t), "python3", "scripts/boto3-auth.py", s.url, queueName, payload(1, nil))
	cmd.Env = append(os.Environ(), append(teamA.env(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")...)
	out, err := cmd.CombinedOutput()
	want := "QS1 ok\nQS2 AccessDeniedException\nunknown-key UnrecognizedClientException\nunsigned MissingAuthenticationTokenException\n"
	if err != nil || string(out) != want {
		t.Errorf("scripts/boto3-auth.py: %v\n%s\nwant:\n%s", err, out, want)
	}
}

// rawSubmit signs signedBody with k at when, sends sentBody, and returns
// the status and the error code.
func rawSubmit(t *testing.T, s *server, k key, signedBody, sentBody string, when time.Time) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.url+"/v1/submitservicejob", strings.NewReader(signedBody))
	req.Header.Set("Content-Type", "application/json")
	err := v4.NewSigner().SignHTTP(ctx(t), aws.Credentials{AccessKeyID: k.ID, SecretAccessKey: k.Secret}, req, sha256Hex(signedBody), "batch", region, when)
	fatalIf(t, "sign", err)
	req.Body = http.NoBody
	if sentBody != "" {
		req.Body, req.ContentLength = nopCloser{bytes.NewReader([]byte(sentBody))}, int64(len(sentBody))
	}
	resp, err := http.DefaultClient.Do(req)
	fatalIf(t, "raw submit", err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType")
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := apiCode(err); got != code {
		t.Errorf("%s: %v (code %q), want %s", what, err, got, code)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// applyTeamPolicies applies, with the sharq CLI, a policy team-QSn for
// each walkthrough share: submit, update and terminate in that share, and
// read everything.
func applyTeamPolicies(t *testing.T, s *server, admin key) {
	t.Helper()
	var b strings.Builder
	b.WriteString("accessPolicies:\n")
	for _, sh := range walkthroughShares {
		fmt.Fprintf(&b, `  - name: team-%s
    statements:
      - effect: Allow
        actions: [batch:SubmitServiceJob, batch:UpdateServiceJob, batch:TerminateServiceJob]
        resources: [%q, "arn:aws:batch:*:*:service-job/*"]
      - {effect: Allow, actions: ["batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"], resources: ["*"]}
`, sh.name, shareArn(sh.name))
	}
	file := filepath.Join(t.TempDir(), "policies.yaml")
	fatalIf(t, "write policies", os.WriteFile(file, []byte(b.String()), 0o644))
	if out, err := runSharq(t, s, admin, "apply", "-f", file); err != nil {
		t.Fatalf("sharq apply -f policies.yaml: %v\n%s", err, out)
	}
}

// Ensure servers sharing a PostgreSQL store share its access keys: a key
// made with sharq admin keys --store signs requests that a follower
// forwards and the leader verifies, and unsigned or badly signed ones are
// refused through the follower as through the leader.
func TestReplicasSigned(t *testing.T) {
	t.Parallel()
	store, dir := pgtest.URL(t), t.TempDir()
	args := []string{"admin", "keys", "create", "--store", store, "--data-dir", dir, "--name", "admin", "--policy", "AdministratorAccess", "-o", "json"}
	out, err := exec.Command(sharqBin, args...).Output()
	var admin key
	if err == nil {
		err = json.Unmarshal(out, &admin)
	}
	if err != nil || admin.ID == "" {
		t.Fatalf("sharq %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	rs := startReplicaSetOn(t, store, dir, 2, "--auth", "sigv4")
	lead, _ := rs.leader(60 * time.Second)
	follower := rs.all()[(slices.Index(rs.all(), lead)+1)%2]
	c := follower.clientWith(admin)
	setUpWalkthrough(t, c, 3)
	submit(t, c, jobSpec{name: "signed", share: "QS1", priority: 1})
	anon := batch.New(c.Options(), func(o *batch.Options) { o.Credentials = aws.AnonymousCredentials{} })
	_, err = anon.SubmitServiceJob(ctx(t), submitInput(jobSpec{name: "anon", share: "QS1", priority: 1}))
	wantCode(t, "an unsigned submission through a follower", err, "MissingAuthenticationTokenException")
	_, err = follower.clientWith(key{ID: admin.ID, Secret: "wrong"}).ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName)})
	wantCode(t, "a wrong secret through a follower", err, "InvalidSignatureException")
}
