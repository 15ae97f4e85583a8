package e2e

import (
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
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

const trainingLogGroup = "/aws/sagemaker/TrainingJobs"

// sdkOptions are the HTTP client, endpoint and key the tests' SageMaker and
// Logs clients share with the Batch ones.
func (s *server) sdkCreds(k key) (aws.CredentialsProvider, *http.Client) {
	return credentials.NewStaticCredentialsProvider(k.ID, k.Secret, ""), &http.Client{Timeout: 30 * time.Second}
}

func (s *server) sageMaker(k key) *sagemaker.Client {
	creds, hc := s.sdkCreds(k)
	return sagemaker.New(sagemaker.Options{Region: region, BaseEndpoint: aws.String(s.url), Credentials: creds,
		Retryer: aws.NopRetryer{}, HTTPClient: ownBodies{hc}})
}

func (s *server) logs(k key) *cloudwatchlogs.Client {
	creds, hc := s.sdkCreds(k)
	return cloudwatchlogs.New(cloudwatchlogs.Options{Region: region, BaseEndpoint: aws.String(s.url), Credentials: creds,
		Retryer: aws.NopRetryer{}, HTTPClient: ownBodies{hc}})
}

// Ensure, against the real binary with the local executor and --auth
// sigv4, that the SageMaker SDK's calls after a submission answer as AWS's
// do: DescribeTrainingJob of a running, a completed, a failed and a
// stopped attempt; ListTrainingJobs' filters and pages; StopTrainingJob;
// tags; the attempt's output through DescribeLogStreams and GetLogEvents
// with their tokens; refusals by policy; an unknown operation; and the
// same through boto3 and the AWS CLI pointed at the server by
// AWS_ENDPOINT_URL alone.
func TestSageMakerCalls(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"aws", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): TestSageMakerCalls drives the server with the AWS CLI and boto3", tool, err)
		}
	}
	dataDir := t.TempDir()
	admin := createKey(t, dataDir, "admin", "AdministratorAccess")
	reader := createKey(t, dataDir, "reader", "ReadOnlyAccess")
	nobody := createKey(t, dataDir, "nobody")
	s := startLocal(t, dataDir, "--auth", "sigv4", "--stop-grace", "5s")
	c := s.clientWith(admin)
	setUpWalkthrough(t, c, 3)

	done := s.submitLocal(t, c, localJob{name: "done", share: "QS1", priority: 1, argv: shell("echo epoch 1; echo epoch 2")})
	broken := s.submitLocal(t, c, localJob{name: "broken", share: "QS2", priority: 1, argv: shell("echo bad data >&2; exit 3")})
	long := s.submitLocal(t, c, localJob{name: "long", share: "QS3", priority: 1})
	waitStatus(t, c, done, types.ServiceJobStatusSucceeded)
	waitStatus(t, c, broken, types.ServiceJobStatusFailed)
	waitStatus(t, c, long, types.ServiceJobStatusRunning)
	name := func(job string) string { return attemptID(t, describe(t, c, job).LatestAttempt.ServiceResourceId) }
	doneTJ, brokenTJ, longTJ := name(done), name(broken), name(long)

	sm := s.sageMaker(admin)
	d := describeTJ(t, sm, longTJ)
	if d.TrainingJobStatus != smtypes.TrainingJobStatusInProgress || d.SecondaryStatus != smtypes.SecondaryStatusTraining ||
		d.TrainingStartTime == nil || d.TrainingEndTime != nil || aws.ToString(d.TrainingJobArn) != aws.ToString(describe(t, c, long).LatestAttempt.ServiceResourceId.Value) {
		t.Errorf("running: %s", js(d))
	}
	d = describeTJ(t, sm, doneTJ)
	statuses := transitionStatuses(d)
	if d.TrainingJobStatus != smtypes.TrainingJobStatusCompleted || d.FailureReason != nil || d.TrainingEndTime == nil ||
		statuses[0] != "Pending" || !slices.Equal(statuses[len(statuses)-2:], []string{"Training", "Completed"}) ||
		d.ResourceConfig == nil || d.ResourceConfig.InstanceType != g5 || d.StoppingCondition == nil || aws.ToInt32(d.StoppingCondition.MaxRuntimeInSeconds) != 3600 ||
		d.AlgorithmSpecification == nil || d.Environment[markEnv] == "" {
		t.Errorf("completed: %s", js(d))
	}
	d = describeTJ(t, sm, brokenTJ)
	if d.TrainingJobStatus != smtypes.TrainingJobStatusFailed || aws.ToString(d.FailureReason) != "exit code 3: bad data" {
		t.Errorf("failed: status %s, reason %q, want Failed, \"exit code 3: bad data\"", d.TrainingJobStatus, aws.ToString(d.FailureReason))
	}
	_, err := sm.DescribeTrainingJob(ctx(t), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String("AWSBatchnope0123456789abcdef0123456789abcdef")})
	wantCode(t, "DescribeTrainingJob of no such job", err, "ResourceNotFound")
	_, err = sm.CreateTrainingJob(ctx(t), &sagemaker.CreateTrainingJobInput{TrainingJobName: aws.String("x"), RoleArn: aws.String("arn:aws:iam::000000000000:role/r"),
		OutputDataConfig: &smtypes.OutputDataConfig{S3OutputPath: aws.String("s3://b/o")}, StoppingCondition: &smtypes.StoppingCondition{},
		ResourceConfig:         &smtypes.ResourceConfig{InstanceType: smtypes.TrainingInstanceTypeMlM5Large, InstanceCount: aws.Int32(1), VolumeSizeInGB: aws.Int32(1)},
		AlgorithmSpecification: &smtypes.AlgorithmSpecification{TrainingInputMode: smtypes.TrainingInputModeFile}})
	wantCode(t, "CreateTrainingJob", err, "UnknownOperationException")

	checkListTrainingJobs(t, sm, doneTJ, brokenTJ, longTJ)
	checkLogEvents(t, s, admin, doneTJ)

	// Tags live on the service job.
	_, err = sm.AddTags(ctx(t), &sagemaker.AddTagsInput{ResourceArn: d.TrainingJobArn, Tags: []smtypes.Tag{{Key: aws.String("team"), Value: aws.String("vision")}}})
	fatalIf(t, "AddTags", err)
	tags, err := sm.ListTags(ctx(t), &sagemaker.ListTagsInput{ResourceArn: d.TrainingJobArn})
	fatalIf(t, "ListTags", err)
	if len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "team" || describe(t, c, broken).Tags["team"] != "vision" {
		t.Errorf("ListTags: %s, service job's tags %v", js(tags.Tags), describe(t, c, broken).Tags)
	}

	// Policies: the reader reads and stops nothing; a key with no policy
	// reads nothing.
	if _, err := s.sageMaker(reader).DescribeTrainingJob(ctx(t), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(longTJ)}); err != nil {
		t.Errorf("reader's DescribeTrainingJob: %v", err)
	}
	_, err = s.sageMaker(reader).StopTrainingJob(ctx(t), &sagemaker.StopTrainingJobInput{TrainingJobName: aws.String(longTJ)})
	wantCode(t, "reader's StopTrainingJob", err, "AccessDeniedException")
	_, err = s.sageMaker(nobody).DescribeTrainingJob(ctx(t), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(longTJ)})
	wantCode(t, "DescribeTrainingJob with no policy", err, "AccessDeniedException")
	_, err = s.logs(nobody).GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(trainingLogGroup), LogStreamName: aws.String(doneTJ + "/algo-1-0")})
	wantCode(t, "GetLogEvents with no policy", err, "AccessDeniedException")
	// A policy of sagemaker:* and logs:* reads training jobs and their
	// logs, but stops one only with batch:TerminateServiceJob too.
	smOnly := applySageMakerPolicy(t, s, admin)
	if _, err := s.sageMaker(smOnly).DescribeTrainingJob(ctx(t), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(longTJ)}); err != nil {
		t.Errorf("DescribeTrainingJob under sagemaker:*: %v", err)
	}
	if _, err := s.logs(smOnly).DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(trainingLogGroup)}); err != nil {
		t.Errorf("DescribeLogStreams under logs:*: %v", err)
	}
	_, err = s.sageMaker(smOnly).StopTrainingJob(ctx(t), &sagemaker.StopTrainingJobInput{TrainingJobName: aws.String(longTJ)})
	wantCode(t, "StopTrainingJob under sagemaker:* alone", err, "AccessDeniedException")
	if err == nil || !strings.Contains(err.Error(), "batch:TerminateServiceJob") {
		t.Errorf("StopTrainingJob under sagemaker:* alone: %v, want a refusal of batch:TerminateServiceJob", err)
	}
	if d := describeTJ(t, sm, longTJ); d.TrainingJobStatus != smtypes.TrainingJobStatusInProgress {
		t.Errorf("after the refused stops: %s", d.TrainingJobStatus)
	}

	// StopTrainingJob stops the attempt as TerminateServiceJob does.
	_, err = sm.StopTrainingJob(ctx(t), &sagemaker.StopTrainingJobInput{TrainingJobName: aws.String(longTJ)})
	fatalIf(t, "StopTrainingJob", err)
	j := waitStatus(t, c, long, types.ServiceJobStatusFailed)
	if !aws.ToBool(j.IsTerminated) {
		t.Errorf("stopped job: isTerminated false")
	}
	if d := describeTJ(t, sm, longTJ); d.TrainingJobStatus != smtypes.TrainingJobStatusStopped || d.TrainingEndTime == nil {
		t.Errorf("stopped: %s", js(d))
	}
	_, err = sm.StopTrainingJob(ctx(t), &sagemaker.StopTrainingJobInput{TrainingJobName: aws.String(longTJ)})
	wantCode(t, "StopTrainingJob of a stopped job", err, "ValidationException")
	checkAuditHas(t, s, admin, "sagemaker:StopTrainingJob", "sagemaker:AddTags")

	checkScopes(t, s, admin)
	checkSDKClients(t, s, reader, doneTJ)
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}

func describeTJ(t *testing.T, sm *sagemaker.Client, name string) *sagemaker.DescribeTrainingJobOutput {
	t.Helper()
	d, err := sm.DescribeTrainingJob(ctx(t), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(name)})
	fatalIf(t, "DescribeTrainingJob "+name, err)
	if aws.ToString(d.TrainingJobName) != name || d.CreationTime == nil || d.LastModifiedTime == nil {
		t.Errorf("DescribeTrainingJob %s: %s", name, js(d))
	}
	return d
}

func transitionStatuses(d *sagemaker.DescribeTrainingJobOutput) []string {
	out := []string{""}
	for _, tr := range d.SecondaryStatusTransitions {
		out = append(out, string(tr.Status))
	}
	return out[min(1, len(out)-1):]
}

func checkListTrainingJobs(t *testing.T, sm *sagemaker.Client, done, broken, long string) {
	t.Helper()
	list := func(in sagemaker.ListTrainingJobsInput) []string {
		out, err := sm.ListTrainingJobs(ctx(t), &in)
		fatalIf(t, "ListTrainingJobs", err)
		var names []string
		for _, s := range out.TrainingJobSummaries {
			names = append(names, aws.ToString(s.TrainingJobName))
		}
		return names
	}
	if got := list(sagemaker.ListTrainingJobsInput{StatusEquals: smtypes.TrainingJobStatusCompleted}); !slices.Equal(got, []string{done}) {
		t.Errorf("Completed: %v, want %v", got, []string{done})
	}
	if got := list(sagemaker.ListTrainingJobsInput{NameContains: aws.String("BROKEN")}); !slices.Equal(got, []string{broken}) {
		t.Errorf("NameContains BROKEN: %v, want %v", got, []string{broken})
	}
	if got := list(sagemaker.ListTrainingJobsInput{CreationTimeAfter: aws.Time(time.Now().Add(time.Hour))}); len(got) != 0 {
		t.Errorf("created in an hour: %v", got)
	}
	want := []string{done, broken, long}
	slices.Sort(want)
	var pages []string
	p := sagemaker.NewListTrainingJobsPaginator(sm, &sagemaker.ListTrainingJobsInput{SortBy: smtypes.SortByName, MaxResults: aws.Int32(1)})
	for n := 0; p.HasMorePages(); n++ {
		out, err := p.NextPage(ctx(t))
		fatalIf(t, "ListTrainingJobs page", err)
		if len(out.TrainingJobSummaries) != 1 || n > 3 {
			t.Fatalf("page %d: %s", n, js(out))
		}
		pages = append(pages, aws.ToString(out.TrainingJobSummaries[0].TrainingJobName))
	}
	if !slices.Equal(pages, want) {
		t.Errorf("pages by name: %v, want %v", pages, want)
	}
	slices.Reverse(want)
	if got := list(sagemaker.ListTrainingJobsInput{SortBy: smtypes.SortByName, SortOrder: smtypes.SortOrderDescending}); !slices.Equal(got, want) {
		t.Errorf("by name, descending: %v, want %v", got, want)
	}
}

func checkLogEvents(t *testing.T, s *localServer, k key, name string) {
	t.Helper()
	cwl := s.logs(k)
	streams, err := cwl.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(trainingLogGroup),
		LogStreamNamePrefix: aws.String(name + "/")})
	fatalIf(t, "DescribeLogStreams", err)
	if len(streams.LogStreams) != 1 || !strings.HasPrefix(aws.ToString(streams.LogStreams[0].LogStreamName), name+"/algo-1-") {
		t.Fatalf("DescribeLogStreams: %s", js(streams))
	}
	stream := streams.LogStreams[0].LogStreamName
	get := func(in cloudwatchlogs.GetLogEventsInput) (*cloudwatchlogs.GetLogEventsOutput, []string) {
		in.LogGroupName, in.LogStreamName = aws.String(trainingLogGroup), stream
		out, err := cwl.GetLogEvents(ctx(t), &in)
		fatalIf(t, "GetLogEvents", err)
		var msgs []string
		for _, e := range out.Events {
			msgs = append(msgs, aws.ToString(e.Message))
			if aws.ToInt64(e.Timestamp) <= 0 {
				t.Errorf("event without a time: %s", js(e))
			}
		}
		return out, msgs
	}
	first, msgs := get(cloudwatchlogs.GetLogEventsInput{StartFromHead: aws.Bool(true), Limit: aws.Int32(1)})
	if !slices.Equal(msgs, []string{"epoch 1"}) {
		t.Errorf("first page: %v", msgs)
	}
	second, msgs := get(cloudwatchlogs.GetLogEventsInput{NextToken: first.NextForwardToken, Limit: aws.Int32(1)})
	if !slices.Equal(msgs, []string{"epoch 2"}) {
		t.Errorf("second page: %v", msgs)
	}
	end, msgs := get(cloudwatchlogs.GetLogEventsInput{NextToken: second.NextForwardToken})
	if len(msgs) != 0 || aws.ToString(end.NextForwardToken) != aws.ToString(second.NextForwardToken) {
		t.Errorf("past the end: %v, token %s after %s", msgs, aws.ToString(end.NextForwardToken), aws.ToString(second.NextForwardToken))
	}
	if _, msgs := get(cloudwatchlogs.GetLogEventsInput{NextToken: second.NextBackwardToken}); !slices.Equal(msgs, []string{"epoch 1"}) {
		t.Errorf("back from the second page: %v", msgs)
	}
	if _, msgs := get(cloudwatchlogs.GetLogEventsInput{}); !slices.Equal(msgs, []string{"epoch 1", "epoch 2"}) {
		t.Errorf("the tail: %v", msgs)
	}
	_, err = cwl.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(trainingLogGroup), LogStreamName: aws.String(name + "/algo-2-1")})
	wantCode(t, "GetLogEvents of no such stream", err, "ResourceNotFoundException")
	_, err = cwl.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("/aws/lambda/x")})
	wantCode(t, "DescribeLogStreams of another group", err, "ResourceNotFoundException")
}

// checkAuditHas checks that the audit log holds the actions.
func checkAuditHas(t *testing.T, s *localServer, admin key, actions ...string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() error {
		out, err := runSharq(t, s.server, admin, "events", "--audit")
		if err != nil {
			return notYet("sharq events --audit: %v\n%s", err, out)
		}
		for _, a := range actions {
			if !strings.Contains(out, a) {
				return notYet("the audit log has no %s:\n%s", a, out)
			}
		}
		return nil
	})
}

// checkSDKClients runs boto3 and the AWS CLI with only AWS_ENDPOINT_URL
// pointing them at the server.
func checkSDKClients(t *testing.T, s *localServer, k key, name string) {
	t.Helper()
	env := append(os.Environ(), append(k.env(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_ENDPOINT_URL="+s.url, "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1", "AWS_SESSION_TOKEN=", "AWS_DEFAULT_REGION="+region)...)
	cmd := exec.CommandContext(ctx(t), "python3", "scripts/boto3-sagemaker.py", name)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	want := "describe Completed Completed True Completed\nstreams 1 True\nevents ['epoch 1', 'epoch 2']\nunknown ResourceNotFound\niam AccessDenied\niam AccessDenied\n"
	if err != nil || string(out) != want {
		t.Errorf("scripts/boto3-sagemaker.py: %v\n%s\nwant:\n%s", err, out, want)
	}
	cli := func(args ...string) string {
		cmd := exec.CommandContext(ctx(t), "aws", append(args, "--output", "json")...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := cli("sagemaker", "describe-training-job", "--training-job-name", name); !strings.Contains(out, `"TrainingJobStatus": "Completed"`) {
		t.Errorf("aws sagemaker describe-training-job:\n%s", out)
	}
	streams := cli("logs", "describe-log-streams", "--log-group-name", trainingLogGroup, "--log-stream-name-prefix", name+"/")
	_, rest, _ := strings.Cut(streams, `"logStreamName": "`)
	stream, _, _ := strings.Cut(rest, `"`)
	if out := cli("logs", "get-log-events", "--log-group-name", trainingLogGroup, "--log-stream-name", stream, "--start-from-head"); !strings.Contains(out, `"message": "epoch 2"`) {
		t.Errorf("aws logs get-log-events:\n%s", out)
	}
}

// checkScopes checks that a request is refused when its signature's scope
// names another service than its shape is for, or when it is unsigned.
func checkScopes(t *testing.T, s *localServer, k key) {
	t.Helper()
	for _, tc := range []struct{ path, target, service, want string }{
		{"/", "SageMaker.ListTrainingJobs", "sagemaker", ""},
		{"/", "SageMaker.ListTrainingJobs", "logs", "InvalidSignatureException"},
		{"/", "Logs_20140328.DescribeLogStreams", "sagemaker", "InvalidSignatureException"},
		{"/v1/listservicejobs", "", "sagemaker", "InvalidSignatureException"},
		{"/", "SageMaker.ListTrainingJobs", "", "MissingAuthenticationTokenException"},
	} {
		body := `{"logGroupName":"` + trainingLogGroup + `"}`
		req, _ := http.NewRequest("POST", s.url+tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		if tc.target != "" {
			req.Header.Set("X-Amz-Target", tc.target)
		}
		if tc.service != "" {
			err := v4.NewSigner().SignHTTP(ctx(t), aws.Credentials{AccessKeyID: k.ID, SecretAccessKey: k.Secret}, req, sha256Hex(body), tc.service, region, time.Now())
			fatalIf(t, "sign", err)
		}
		resp, err := http.DefaultClient.Do(req)
		fatalIf(t, "POST "+tc.path, err)
		resp.Body.Close()
		if got := resp.Header.Get("X-Amzn-ErrorType"); got != tc.want || (tc.want == "") != (resp.StatusCode == 200) {
			t.Errorf("%s %s signed for %q: %d %q, want %q", tc.path, tc.target, tc.service, resp.StatusCode, got, tc.want)
		}
	}
}

// applySageMakerPolicy applies the policy sm-only (sagemaker:* and logs:*
// on everything) and returns a key that has it alone.
func applySageMakerPolicy(t *testing.T, s *localServer, admin key) key {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policies.yaml")
	fatalIf(t, "write policies", os.WriteFile(file, []byte(`accessPolicies:
  - name: sm-only
    statements:
      - {effect: Allow, actions: ["sagemaker:*", "logs:*"], resources: ["*"]}
`), 0o644))
	if out, err := runSharq(t, s.server, admin, "apply", "-f", file); err != nil {
		t.Fatalf("sharq apply -f policies.yaml: %v\n%s", err, out)
	}
	return createKey(t, s.dataDir, "sm-only", "sm-only")
}
