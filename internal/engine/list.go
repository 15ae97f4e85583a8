package engine

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// ListServiceJobs lists jobs newest first. With no status and no filter it
// lists RUNNING jobs; a filter replaces the status, except QUOTA_SHARE_NAME
// and SHARE_IDENTIFIER, which combine with it.
func (e *Engine) ListServiceJobs(ctx context.Context, in ListServiceJobsInput) ([]record.Job, string, error) {
	f := store.JobFilter{After: in.NextToken, Limit: in.MaxResults}
	if f.Limit <= 0 || f.Limit > 100 {
		f.Limit = 100
	}
	if in.JobQueue != "" {
		e.rlock()
		q, err := e.findQueue(in.JobQueue)
		e.mu.RUnlock()
		if err != nil {
			return nil, "", err
		}
		f.Queue = q.JobQueueArn
	}
	status := in.JobStatus
	var shareID bool // f.Share is a share identifier, not a quota share's name
	if len(in.Filters) == 0 && status == "" {
		status = StatusRunning
	}
	for _, flt := range in.Filters {
		if len(flt.Values) == 0 {
			return nil, "", invalidf("filter %s needs a value", flt.Name)
		}
		v := flt.Values[0]
		switch flt.Name {
		case "JOB_NAME":
			status = ""
			f.NamePrefix, f.NameExact = strings.TrimSuffix(v, "*"), !strings.HasSuffix(v, "*")
		case "BEFORE_CREATED_AT", "AFTER_CREATED_AT":
			status = ""
			t, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, "", invalidf("filter %s takes epoch milliseconds, not %q", flt.Name, v)
			}
			if flt.Name == "BEFORE_CREATED_AT" {
				f.CreatedBefore = t
			} else {
				f.CreatedAfter = t
			}
		case "QUOTA_SHARE_NAME":
			f.Share, shareID = v, false
		case "SHARE_IDENTIFIER":
			// The store's share column holds a fair-share job's identifier
			// (a job has a quota share or an identifier, never both); the
			// rows are told apart below.
			f.Share, shareID = v, true
		default:
			return nil, "", invalidf("unknown filter name %s", flt.Name)
		}
	}
	if status != "" {
		f.Statuses = []string{status}
	}
	rows, next, err := e.opts.Store.ListJobs(ctx, f)
	if errors.Is(err, store.ErrInvalidCursor) {
		return nil, "", &Error{Code: Invalid, Message: "Invalid nextToken", Err: err}
	}
	if err != nil {
		return nil, "", &Error{Code: Internal, Message: "internal error", Err: err}
	}
	out := make([]record.Job, 0, len(rows))
	e.rlock()
	defer e.mu.RUnlock()
	for _, r := range rows {
		var j record.Job
		if live := e.jobs[r.ID]; live != nil {
			j = e.view(live)
		} else if d, err := record.DecodeJob(r.Doc); err == nil {
			j = *d
		} else {
			continue
		}
		if f.Share != "" && shareID != (j.ShareIdentifier == f.Share) {
			continue // a quota share and an identifier of the same name
		}
		out = append(out, j)
	}
	return out, next, nil
}

// --- tags

// jobTags finds the tags of the job an ARN names, and what commits a
// change to them in a cycle. A job that ended before this start is found
// among those read aside, and kept in memory when keep is set (mu held to
// write), so that the change is committed.
func (e *Engine) jobTags(resource string, aside asideJobs, keep bool) (*map[string]string, func(*cycle), error) {
	if isJobArn(resource) {
		j, err := e.knownJob(resource, aside, keep)
		if err != nil && ErrorCode(err) != NotFound {
			return nil, nil, err
		}
		if j != nil {
			return &j.Tags, func(c *cycle) { e.touch(c, j) }, nil
		}
	}
	return nil, nil, notFoundf("Resource %s does not exist", resource)
}

func isJobArn(resource string) bool { return strings.Contains(resource, ":service-job/") }

// asideTagged reads aside the job a tagging names, if it names one.
func (e *Engine) asideTagged(ctx context.Context, resource string) asideJobs {
	if !isJobArn(resource) {
		return nil
	}
	return e.readAsideOne(ctx, resource)
}

// TagResource tags a resource of the model or a job.
func (e *Engine) TagResource(ctx context.Context, arn string, tags map[string]string) error {
	aside := e.asideTagged(ctx, arn)
	return e.do(ctx, changeFunc(func(c *cycle) error {
		if ch, ok, err := e.model.TagResource(arn, tags); ok {
			if err != nil {
				return modelErr(err)
			}
			return e.applyChange(c, ch)
		}
		t, save, err := e.jobTags(arn, aside, true)
		if err != nil {
			return err
		}
		if err := batchmodel.CheckTagLimit(*t, tags); err != nil {
			return modelErr(err)
		}
		if *t == nil {
			*t = map[string]string{}
		}
		for k, v := range tags {
			(*t)[k] = v
		}
		save(c)
		return nil
	}))
}

// UntagResource untags a resource of the model or a job.
func (e *Engine) UntagResource(ctx context.Context, arn string, keys []string) error {
	aside := e.asideTagged(ctx, arn)
	return e.do(ctx, changeFunc(func(c *cycle) error {
		if ch, ok := e.model.UntagResource(arn, keys); ok {
			return e.applyChange(c, ch)
		}
		t, save, err := e.jobTags(arn, aside, true)
		if err != nil {
			return err
		}
		for _, k := range keys {
			delete(*t, k)
		}
		save(c)
		return nil
	}))
}

// ListTagsForResource reads a resource's tags under the read lock, or,
// after releasing it, those of a job that memory does not hold from the
// store.
func (e *Engine) ListTagsForResource(ctx context.Context, arn string) (map[string]string, error) {
	e.rlock()
	if t, ok := e.model.Tags(arn); ok {
		defer e.mu.RUnlock()
		return copyTags(t), nil
	}
	t, _, err := e.jobTags(arn, nil, false)
	if err == nil {
		defer e.mu.RUnlock()
		return copyTags(*t), nil
	}
	purged := e.purgedBefore
	e.mu.RUnlock()
	if !isJobArn(arn) || ErrorCode(err) != NotFound {
		return nil, err
	}
	j, err := e.readStored(ctx, arn, purged)
	if ErrorCode(err) == NotFound {
		return nil, notFoundf("Resource %s does not exist", arn)
	}
	if err != nil {
		return nil, err
	}
	return copyTags(j.Tags), nil
}

// copyTags copies tags; none are an empty map, not nil.
func copyTags(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	maps.Copy(out, t)
	return out
}
