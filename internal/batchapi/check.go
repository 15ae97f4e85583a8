package batchapi

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
)

// Limits from the AWS Batch model and its service limits.
const (
	maxNameLen       = 128
	maxTags          = 50
	maxTagKeyLen     = 128
	maxTagValueLen   = 256
	maxListItems     = 100 // names or ARNs in one Describe call
	maxPageSize      = 100
	maxSubmitBytes   = 30 << 10 // SubmitServiceJob request
	maxPayloadBytes  = 10 << 10 // serviceRequestPayload
	maxTerminateJobs = 50
	maxPriority      = 9999 // schedulingPriority
)

// check collects the first syntax error of a request; later checks are
// no-ops once one failed, so a handler lists its checks without branching
// and answers the first problem, as AWS does.
type check struct{ err error }

func (c *check) failf(format string, args ...any) {
	if c.err == nil {
		c.err = clientErrorf(format, args...)
	}
}

// required fails when the string member is absent or empty.
func (c *check) required(field, v string) bool {
	if v == "" {
		c.failf("%s is required", field)
		return false
	}
	return true
}

// present fails when a member that may be zero, but must be sent, is nil.
func present[T any](c *check, field string, v *T) bool {
	if v == nil {
		c.failf("%s is required", field)
		return false
	}
	return true
}

// name checks a required resource or job name.
func (c *check) name(field, v string) {
	if c.required(field, v) {
		c.optName(field, v)
	}
}

// optName checks a resource name that may be absent.
func (c *check) optName(field, v string) {
	if v != "" && !arn.ValidName(v) {
		c.failf("%s must be 1 to %d characters long and contain only letters, numbers, hyphens (-) and underscores (_)", field, maxNameLen)
	}
}

// enum checks that v, if sent, is one of values.
func (c *check) enum(field, v string, values ...string) {
	if v != "" && !slices.Contains(values, v) {
		c.failf("%s must be one of %s, not %q", field, strings.Join(values, ", "), v)
	}
}

// between checks that an integer member, if sent, is within [lo, hi].
func (c *check) between(field string, v *int, lo, hi int) {
	if v != nil && (*v < lo || *v > hi) {
		c.failf("%s must be between %d and %d, not %d", field, lo, hi, *v)
	}
}

// atLeast checks that an integer member, if sent, is at least lo.
func (c *check) atLeast(field string, v *int, lo int) {
	if v != nil && *v < lo {
		c.failf("%s must be at least %d, not %d", field, lo, *v)
	}
}

// int32Member checks that an integer member, if sent, fits AWS's Integer
// (32 bits), as the SDKs decode it. Larger values would be stored but
// could not be read back, and overflow once multiplied (seconds into
// durations, capacities by percentages).
func (c *check) int32Member(field string, v *int) {
	if v != nil && *v > maxInt32 {
		c.failf("%s must be at most %d, not %d", field, maxInt32, *v)
	}
}

// count checks the number of entries of a list or map member.
func (c *check) count(field string, n, lo, hi int) {
	switch {
	case n < lo:
		c.failf("%s must have at least %d %s", field, lo, plural(lo, "entry", "entries"))
	case n > hi:
		c.failf("%s must have at most %d %s, not %d", field, hi, plural(hi, "entry", "entries"), n)
	}
}

// length checks the length in characters of a string member.
func (c *check) length(field, v string, lo, hi int) {
	if n := len([]rune(v)); n < lo || n > hi {
		if lo == 0 {
			c.failf("%s must be at most %d characters long", field, hi)
		} else {
			c.failf("%s must be %d to %d characters long", field, lo, hi)
		}
	}
}

// tags checks a tag map; absent is fine.
func (c *check) tags(field string, tags map[string]string) {
	if tags == nil {
		return
	}
	c.count(field, len(tags), 1, maxTags)
	// Sorted, so that the error named is the same on every try.
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		c.tagKey("Tag key", k)
		if len([]rune(tags[k])) > maxTagValueLen {
			c.failf("The value of tag %q must be at most %d characters long", k, maxTagValueLen)
		}
	}
}

func (c *check) tagKey(field, k string) {
	if n := len([]rune(k)); n < 1 || n > maxTagKeyLen {
		c.failf("%s %q must be 1 to %d characters long", field, k, maxTagKeyLen)
	}
}

// arnOf checks a required member that must be an ARN of kind k.
func (c *check) arnOf(field, v string, k arn.Kind) {
	if !c.required(field, v) {
		return
	}
	if _, err := arn.ParseKind(v, k); err != nil {
		c.failf("%s is not a valid %s ARN: %s", field, kindWords(k), arnReason(err))
	}
}

// nameOrARN checks a required member naming a resource of kind k by name
// or by ARN.
func (c *check) nameOrARN(field, v string, k arn.Kind) {
	if !c.required(field, v) {
		return
	}
	if strings.HasPrefix(v, "arn:") {
		c.arnOf(field, v, k)
		return
	}
	if !arn.ValidName(v) {
		c.failf("%s must be the name or ARN of a %s; a name is 1 to %d letters, numbers, hyphens (-) and underscores (_)", field, kindWords(k), maxNameLen)
	}
}

// page checks the pagination members and converts them.
func (c *check) page(p pageRequest) batchmodel.Page {
	c.between("maxResults", p.MaxResults, 1, maxPageSize)
	pg := batchmodel.Page{NextToken: p.NextToken}
	if p.MaxResults != nil {
		pg.MaxResults = *p.MaxResults
	}
	return pg
}

// pageRequest holds the pagination members of a listing request.
type pageRequest struct {
	MaxResults *int   `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

func kindWords(k arn.Kind) string { return strings.ReplaceAll(string(k), "-", " ") }

// arnReason is why an ARN did not parse, without the ARN itself, which the
// client already knows.
func arnReason(err error) string {
	if pe, ok := errors.AsType[*arn.ParseError](err); ok {
		return pe.Reason
	}
	return err.Error()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// at names the i-th entry of a list member in messages.
func at(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }
