package logsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/logsapi"
	"github.com/sharq-dev/sharq/internal/record"
)

// jobs is an engine of fixed jobs, one attempt each, named by the attempt.
type jobs map[string]record.Job

func (js jobs) AttemptJob(_ context.Context, id string) (record.Job, error) {
	if j, ok := js[id]; ok {
		return j, nil
	}
	return record.Job{}, &engine.Error{Code: engine.NotFound, Message: "no such attempt"}
}

func (js jobs) AttemptJobs(context.Context) ([]record.Job, error) {
	var out []record.Job
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range js {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, js[k])
	}
	return out, nil
}

// logs holds each attempt's stdout of algo-1, as the local executor's
// files would.
type logs map[string]string

func (l logs) Logs(_ context.Context, attempt, host, stream string, offset int64) (io.ReadCloser, error) {
	s, ok := l[attempt]
	if !ok {
		return nil, executor.ErrNoLogs
	}
	if host != "algo-1" || stream != "stdout" {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return io.NopCloser(strings.NewReader(s[min(int(offset), len(s)):])), nil
}

func job(name, status string, stopped int64) record.Job {
	return record.Job{Status: status, CreatedAt: 1_000, History: []record.Transition{{At: 2_000, Status: "SCHEDULED"}, {At: 3_000, Status: "RUNNING"}},
		Attempts: []record.Attempt{{ServiceResourceID: record.ServiceResourceID{Value: "arn:aws:sagemaker:us-east-1:000000000000:training-job/" + name},
			StartedAt: 3_000, StoppedAt: stopped, StatusReason: "Training job completed"}}}
}

func client(t *testing.T) *cloudwatchlogs.Client {
	js := jobs{"live": job("live", "RUNNING", 0), "ended": job("ended", "SUCCEEDED", 4_000), "gone": job("gone", "SUCCEEDED", 4_000)}
	h := logsapi.New(js, logsapi.Options{Region: "us-east-1", AccountID: "000000000000",
		Logs: logs{"live": "one\ntwo\nthr", "ended": "one\ntwo\nthree"}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""), Retryer: aws.NopRetryer{}})
}

// Ensure GetLogEvents reads a stream forward and back by its tokens, with
// a live attempt's unfinished last line held back until it ends, and that
// streams are named and found as SageMaker's.
func TestGetLogEvents(t *testing.T) {
	c := client(t)
	get := func(stream string, in cloudwatchlogs.GetLogEventsInput) (msgs []string, fwd, back string) {
		t.Helper()
		in.LogGroupName, in.LogStreamName = aws.String(logsapi.Group), aws.String(stream)
		out, err := c.GetLogEvents(t.Context(), &in)
		if err != nil {
			t.Fatalf("GetLogEvents %s: %v", stream, err)
		}
		for _, e := range out.Events {
			msgs = append(msgs, aws.ToString(e.Message))
			if aws.ToInt64(e.Timestamp) != 3_000 {
				t.Errorf("event at %d, want the attempt's start", aws.ToInt64(e.Timestamp))
			}
		}
		return msgs, aws.ToString(out.NextForwardToken), aws.ToString(out.NextBackwardToken)
	}
	for name, tc := range map[string]struct {
		stream    string
		in        cloudwatchlogs.GetLogEventsInput
		want      []string
		fwd, back string
	}{
		"LiveTail":       {"live/algo-1-2", cloudwatchlogs.GetLogEventsInput{}, []string{"one", "two"}, "f/8", "b/0"},
		"LiveHead":       {"live/algo-1-2", cloudwatchlogs.GetLogEventsInput{StartFromHead: aws.Bool(true), Limit: aws.Int32(1)}, []string{"one"}, "f/4", "b/0"},
		"LiveOn":         {"live/algo-1-2", cloudwatchlogs.GetLogEventsInput{NextToken: aws.String("f/4")}, []string{"two"}, "f/8", "b/4"},
		"LiveUnfinished": {"live/algo-1-2", cloudwatchlogs.GetLogEventsInput{NextToken: aws.String("f/8")}, nil, "f/8", "b/8"},
		"EndedLastLine":  {"ended/algo-1-2", cloudwatchlogs.GetLogEventsInput{NextToken: aws.String("f/8")}, []string{"three"}, "f/13", "b/8"},
		"EndedBack":      {"ended/algo-1-2", cloudwatchlogs.GetLogEventsInput{NextToken: aws.String("b/8"), Limit: aws.Int32(1)}, []string{"two"}, "f/8", "b/4"},
		"EndedTailLimit": {"ended/algo-1-2", cloudwatchlogs.GetLogEventsInput{Limit: aws.Int32(2)}, []string{"two", "three"}, "f/13", "b/4"},
		"AfterStartTime": {"ended/algo-1-2", cloudwatchlogs.GetLogEventsInput{StartTime: aws.Int64(3_001)}, nil, "f/13", "b/0"},
		"LogsNotKept":    {"gone/algo-1-2", cloudwatchlogs.GetLogEventsInput{StartFromHead: aws.Bool(true)}, nil, "f/0", "b/0"},
	} {
		t.Run(name, func(t *testing.T) {
			msgs, fwd, back := get(tc.stream, tc.in)
			if !slices.Equal(msgs, tc.want) || fwd != tc.fwd || back != tc.back {
				t.Errorf("got %q %s %s, want %q %s %s", msgs, fwd, back, tc.want, tc.fwd, tc.back)
			}
		})
	}
	for _, stream := range []string{"live/algo-2-2", "live/algo-1-3", "nope/algo-1-2", "live"} {
		_, err := c.GetLogEvents(t.Context(), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(logsapi.Group), LogStreamName: aws.String(stream)})
		if code := errorCode(err); code != "ResourceNotFoundException" {
			t.Errorf("stream %s: %v, want ResourceNotFoundException", stream, err)
		}
	}
	_, err := c.GetLogEvents(t.Context(), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(logsapi.Group), LogStreamName: aws.String("live/algo-1-2"), NextToken: aws.String("x/1")})
	if code := errorCode(err); code != "InvalidParameterException" {
		t.Errorf("bad token: %v", err)
	}
}

// Ensure DescribeLogStreams lists one stream per host, by prefix, in pages.
func TestDescribeLogStreams(t *testing.T) {
	c := client(t)
	var names []string
	p := cloudwatchlogs.NewDescribeLogStreamsPaginator(c, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(logsapi.Group), Limit: aws.Int32(2)})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range out.LogStreams {
			names = append(names, aws.ToString(s.LogStreamName))
		}
	}
	if want := []string{"ended/algo-1-2", "gone/algo-1-2", "live/algo-1-2"}; !slices.Equal(names, want) {
		t.Errorf("streams %v, want %v", names, want)
	}
	out, err := c.DescribeLogStreams(t.Context(), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(logsapi.Group), LogStreamNamePrefix: aws.String("live/")})
	if err != nil || len(out.LogStreams) != 1 || aws.ToString(out.LogStreams[0].LogStreamName) != "live/algo-1-2" {
		t.Errorf("prefix live/: %v %v", err, out)
	}
	for _, in := range []cloudwatchlogs.DescribeLogStreamsInput{{LogGroupName: aws.String("/aws/other")}, {LogGroupIdentifier: aws.String("x")},
		{LogGroupIdentifier: aws.String("arn:aws:logs:us-east-1:000000000000:log-group:/aws/other:*")}} {
		if _, err := c.DescribeLogStreams(t.Context(), &in); errorCode(err) != "ResourceNotFoundException" {
			t.Errorf("other group %s: %v", js(in), err)
		}
	}
	in := cloudwatchlogs.DescribeLogStreamsInput{LogGroupIdentifier: aws.String("arn:aws:logs:us-east-1:000000000000:log-group:" + logsapi.Group + ":*")}
	if out, err := c.DescribeLogStreams(t.Context(), &in); err != nil || len(out.LogStreams) != 3 {
		t.Errorf("by the group's ARN: %v %v", err, out)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
