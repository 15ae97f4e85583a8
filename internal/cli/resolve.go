package cli

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/smithy-go"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// resolveJob turns what a person typed for a job (its ID, its ARN, its
// name or a unique beginning or end of its ID, such as the short ID
// tables print) into the job ID. A name means the newest job of that name,
// as people mostly mean the run they just started; a name wins over a
// part of an ID.
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
	if len(out.JobSummaryList) > 0 {
		return aws.ToString(out.JobSummaryList[0].JobId), nil
	}
	if idPart.MatchString(ref) {
		return c.matchJob(ctx, ref)
	}
	return "", &notFoundError{"no job has the ID or name " + ref}
}

// idPart is what may be the beginning or end of a job ID: the short IDs
// tables print are the last 8 characters.
var idPart = regexp.MustCompile(`^[0-9a-fA-F-]{4,35}$`)

// matchJob finds the one job whose ID begins or ends with part.
func (c *client) matchJob(ctx context.Context, part string) (string, error) {
	var m sharqapi.Matches
	if err := c.getJSON(ctx, "/sharq/v1/jobs/match", url.Values{"id": {part}}, &m); err != nil {
		return "", err
	}
	switch len(m.JobIDs) {
	case 0:
		return "", &notFoundError{"no job has the ID or name " + part}
	case 1:
		return m.JobIDs[0], nil
	}
	var jobs []string
	for _, id := range m.JobIDs {
		j, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
		if err != nil {
			return "", err
		}
		jobs = append(jobs, id+" ("+aws.ToString(j.JobName)+")")
	}
	more := ""
	if len(m.JobIDs) == sharqapi.MaxMatches {
		more = ", ..."
	}
	return "", usagef("%s is ambiguous: it is part of the IDs of %s%s; give more of the ID", part, strings.Join(jobs, ", "), more)
}

// isNotFound tells an API error about something that does not exist.
func isNotFound(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && strings.Contains(api.ErrorMessage(), "does not exist")
}
