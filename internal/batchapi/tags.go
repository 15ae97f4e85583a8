package batchapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
)

type tagResourceRequest struct {
	Tags map[string]string `json:"tags"`
}

func (s *Handler) tagResource(r *http.Request, body []byte) (any, error) {
	resource, err := resourceARN(r)
	if err != nil {
		return nil, err
	}
	var in tagResourceRequest
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	var c check
	if in.Tags == nil {
		c.failf("tags is required")
	}
	c.tags("tags", in.Tags)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(r.Context(), "batch:TagResource", resource); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.TagResource(r.Context(), resource, in.Tags)
}

func (s *Handler) listTagsForResource(r *http.Request, _ []byte) (any, error) {
	resource, err := resourceARN(r)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(r.Context(), "batch:ListTagsForResource", resource); err != nil {
		return nil, err
	}
	tags, err := s.eng.ListTagsForResource(r.Context(), resource)
	if err != nil {
		return nil, err
	}
	if tags == nil {
		tags = map[string]string{}
	}
	return struct {
		Tags map[string]string `json:"tags"`
	}{tags}, nil
}

func (s *Handler) untagResource(r *http.Request, _ []byte) (any, error) {
	resource, err := resourceARN(r)
	if err != nil {
		return nil, err
	}
	keys := r.URL.Query()["tagKeys"]
	var c check
	c.count("tagKeys", len(keys), 1, maxTags)
	for _, k := range keys {
		c.tagKey("tagKeys entry", k)
	}
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(r.Context(), "batch:UntagResource", resource); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.UntagResource(r.Context(), resource, keys)
}

// resourceARN is the tag operations' {resourceArn}: the rest of the
// escaped path, unescaped once. Clients encode the ARN's '/' as %2F; one
// that does not still names the same ARN.
func resourceARN(r *http.Request) (string, error) {
	a, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), tagsPrefix))
	if err != nil { // net/http refuses such paths first; kept for other callers
		return "", clientErrorf("resourceArn is not properly percent-encoded in the path")
	}
	if a == "" {
		return "", clientErrorf("resourceArn is required")
	}
	if _, err := arn.Parse(a); err != nil {
		return "", clientErrorf("resourceArn is not the ARN of a Batch scheduling policy, service environment, job queue, quota share or service job: %s", arnReason(err))
	}
	return a, nil
}
