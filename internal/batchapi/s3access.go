package batchapi

import (
	"context"
	"strings"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// authorizeData asks, for a submission to a server that serves S3 itself,
// whether the caller may read the S3 data its payload names and write
// where its outputs and checkpoints go: the executor moves them with the
// server's own key, so without this a key allowed only its team's bucket
// could name another team's as a channel or an output path. r is the
// payload parsed, and only read.
func (s *Handler) authorizeData(ctx context.Context, r *trainingjob.Request) error {
	type ask struct{ action, uri string }
	var asks []ask
	for _, c := range optml.Channels(r) {
		asks = append(asks, ask{"s3:ListBucket", c.URI}, ask{"s3:GetObject", c.URI})
	}
	if u := r.CheckpointConfig.S3Uri; u != "" {
		asks = append(asks, ask{"s3:ListBucket", u}, ask{"s3:GetObject", u}, ask{"s3:PutObject", u})
	}
	if u := r.OutputDataConfig.S3OutputPath; u != "" {
		asks = append(asks, ask{"s3:PutObject", u})
	}
	for _, a := range asks {
		bucket, key, _ := strings.Cut(strings.TrimPrefix(a.uri, "s3://"), "/")
		if !strings.HasPrefix(a.uri, "s3://") || bucket == "" {
			continue // a path of this machine, not S3's
		}
		resource := "arn:aws:s3:::" + bucket + "/" + key // the prefix, as IAM matches it
		if a.action == "s3:ListBucket" {
			resource = "arn:aws:s3:::" + bucket
		}
		if err := s.authorize(ctx, a.action, resource); err != nil {
			return err
		}
	}
	return nil
}
