package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/smithy-go"

	"github.com/sharq-dev/sharq/internal/arn"
)

// resolveJob turns what a person typed for a job (its ID, its ARN or its
// name) into the job ID. A name means the newest job of that name, as
// people mostly mean the run they just started.
func (c *client) resolveJob(ctx context.Context, ref string) (string, error) {
	if strings.HasPrefix(ref, "arn:") {
		a, err := arn.ParseKind(ref, arn.ServiceJob)
		if err != nil {
			return "", usagef("%s is not a service job ARN", ref)
		}
		return a.Name, nil
	}
	_, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(ref)})
	if err == nil {
		return ref, nil
	}
	if !isNotFound(err) {
		return "", err
	}
	out, err := c.batch.ListServiceJobs(ctx, &batch.ListServiceJobsInput{
		Filters:    []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{ref}}},
		MaxResults: aws.Int32(1),
	})
	if err != nil {
		return "", err
	}
	if len(out.JobSummaryList) == 0 {
		return "", &notFoundError{"no job has the ID or name " + ref}
	}
	return aws.ToString(out.JobSummaryList[0].JobId), nil
}

// isNotFound tells an API error about something that does not exist.
func isNotFound(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && strings.Contains(api.ErrorMessage(), "does not exist")
}
