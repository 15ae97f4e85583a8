package sagemakerapi_test

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/aws/smithy-go"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sagemakerapi"
)

const tjArn = "arn:aws:sagemaker:us-east-1:000000000000:training-job/"

// jobs is an engine of fixed ended jobs, one attempt each, named by the
// attempt; tags are kept per service job ARN.
type jobs struct {
	byAttempt map[string]record.Job
	tags      map[string]map[string]string
}

func (js *jobs) AttemptJob(_ context.Context, id string) (record.Job, error) {
	if j, ok := js.byAttempt[id]; ok {
		return j, nil
	}
	return record.Job{}, &engine.Error{Code: engine.NotFound, Message: "no such attempt"}
}

func (js *jobs) AttemptJobs(context.Context) ([]record.Job, error) {
	var out []record.Job
	for _, k := range slices.Sorted(maps.Keys(js.byAttempt)) {
		out = append(out, js.byAttempt[k])
	}
	return out, nil
}

func (js *jobs) TerminateServiceJob(context.Context, string, string) error { return nil }

func (js *jobs) TagResource(_ context.Context, arn string, tags map[string]string) error {
	if js.tags[arn] == nil {
		js.tags[arn] = map[string]string{}
	}
	maps.Copy(js.tags[arn], tags)
	return nil
}

func (js *jobs) ListTagsForResource(_ context.Context, arn string) (map[string]string, error) {
	return js.tags[arn], nil
}

func client(t *testing.T) *sagemaker.Client {
	js := &jobs{byAttempt: map[string]record.Job{}, tags: map[string]map[string]string{}}
	for i, name := range []string{"a", "b", "c"} {
		js.byAttempt[name] = record.Job{JobID: name, JobArn: "arn:aws:batch:us-east-1:000000000000:service-job/" + name, Status: record.StatusSucceeded,
			CreatedAt: int64(1000 * (3 - i)), Attempts: []record.Attempt{{ServiceResourceID: record.ServiceResourceID{Value: tjArn + name},
				StartedAt: 5000, StoppedAt: 6000, StatusReason: "Training job completed"}}}
	}
	srv := httptest.NewServer(sagemakerapi.New(js, sagemakerapi.Options{Region: "us-east-1", AccountID: "000000000000"}))
	t.Cleanup(srv.Close)
	return sagemaker.New(sagemaker.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""), Retryer: aws.NopRetryer{}})
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Ensure ListTrainingJobs sorts by creation time by default, refuses what
// AWS refuses, and pages ListTags.
func TestListsAndRefusals(t *testing.T) {
	c := client(t)
	out, err := c.ListTrainingJobs(t.Context(), &sagemaker.ListTrainingJobsInput{})
	var names []string
	for _, s := range out.TrainingJobSummaries {
		names = append(names, aws.ToString(s.TrainingJobName))
	}
	if err != nil || !slices.Equal(names, []string{"c", "b", "a"}) {
		t.Errorf("by creation time, ascending: %v %v", names, err)
	}
	for name, in := range map[string]*sagemaker.ListTrainingJobsInput{
		"MaxResults0":   {MaxResults: aws.Int32(0)},
		"MaxResults101": {MaxResults: aws.Int32(101)},
		"BadToken":      {NextToken: aws.String("nope")},
		"BadSortBy":     {SortBy: types.SortBy("Size")},
		"BadStatus":     {StatusEquals: types.TrainingJobStatus("Done")},
	} {
		if _, err := c.ListTrainingJobs(t.Context(), in); errorCode(err) != "ValidationException" {
			t.Errorf("%s: %v, want ValidationException", name, err)
		}
	}
	_, err = c.AddTags(t.Context(), &sagemaker.AddTagsInput{ResourceArn: aws.String(tjArn + "a"),
		Tags: []types.Tag{{Key: aws.String("k1"), Value: aws.String("v1")}, {Key: aws.String("k2"), Value: aws.String("v2")}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	p := sagemaker.NewListTagsPaginator(c, &sagemaker.ListTagsInput{ResourceArn: aws.String(tjArn + "a"), MaxResults: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range page.Tags {
			keys = append(keys, aws.ToString(tag.Key))
		}
	}
	if !slices.Equal(keys, []string{"k1", "k2"}) {
		t.Errorf("ListTags pages: %v", keys)
	}
	for name, err := range map[string]error{
		"ListTagsOtherResource": func() error {
			_, err := c.ListTags(t.Context(), &sagemaker.ListTagsInput{ResourceArn: aws.String("arn:aws:sagemaker:us-east-1:000000000000:model/m")})
			return err
		}(),
		"StopEnded": func() error {
			_, err := c.StopTrainingJob(t.Context(), &sagemaker.StopTrainingJobInput{TrainingJobName: aws.String("a")})
			return err
		}(),
	} {
		if errorCode(err) != "ValidationException" {
			t.Errorf("%s: %v, want ValidationException", name, err)
		}
	}
	_, err = c.DescribeTrainingJob(t.Context(), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String("z")})
	if errorCode(err) != "ResourceNotFound" {
		t.Errorf("unknown job: %v", err)
	}
	_, err = c.DeleteModel(t.Context(), &sagemaker.DeleteModelInput{ModelName: aws.String("m")})
	if errorCode(err) != "UnknownOperationException" {
		t.Errorf("DeleteModel: %v", err)
	}
}
