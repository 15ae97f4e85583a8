package batchmodel

import (
	"encoding/json"
	"sort"

	"github.com/sharq-dev/sharq/internal/record"
)

// Inputs of the model's operations. The API layer has already checked
// their syntax (required fields, enums, lengths, ranges); the model checks
// what needs state (existence, uniqueness, cross-resource rules) and
// answers with *Error. Pointer fields in updates mean "unchanged" when nil.

// Page selects one page of a listing.
type Page struct {
	MaxResults int // 0 means the operation's default (100)
	NextToken  string
}

type CreateSchedulingPolicyInput struct {
	Name             string
	QuotaSharePolicy *record.QuotaSharePolicy
	FairsharePolicy  json.RawMessage
	Tags             map[string]string
}

type UpdateSchedulingPolicyInput struct {
	Arn              string
	QuotaSharePolicy *record.QuotaSharePolicy
	FairsharePolicy  json.RawMessage
}

type CreateServiceEnvironmentInput struct {
	Name           string
	Type           string
	CapacityLimits []record.CapacityLimit
	State          string // "" means ENABLED
	Tags           map[string]string
}

type UpdateServiceEnvironmentInput struct {
	ServiceEnvironment string // name or ARN
	CapacityLimits     []record.CapacityLimit
	State              string // "" means unchanged
}

type CreateJobQueueInput struct {
	Name                     string
	Priority                 int
	Type                     string
	ServiceEnvironmentOrder  []record.ServiceEnvironmentOrder // names or ARNs
	SchedulingPolicyArn      string
	State                    string
	JobStateTimeLimitActions []record.JobStateTimeLimitAction
	ComputeEnvironmentOrder  []json.RawMessage
	Tags                     map[string]string
}

type UpdateJobQueueInput struct {
	JobQueue                 string // name or ARN
	State                    string
	SchedulingPolicyArn      string
	Priority                 *int
	ServiceEnvironmentOrder  []record.ServiceEnvironmentOrder
	JobStateTimeLimitActions []record.JobStateTimeLimitAction // nil: unchanged
	ComputeEnvironmentOrder  []json.RawMessage
}

type CreateQuotaShareInput struct {
	Name                         string
	JobQueue                     string // name or ARN
	CapacityLimits               []record.CapacityLimit
	ResourceSharingConfiguration record.ResourceSharingConfiguration
	PreemptionConfiguration      record.QuotaSharePreemptionConfiguration
	State                        string
	Tags                         map[string]string
}

type UpdateQuotaShareInput struct {
	QuotaShareArn                string
	CapacityLimits               []record.CapacityLimit
	ResourceSharingConfiguration *record.ResourceSharingConfiguration
	PreemptionConfiguration      *record.QuotaSharePreemptionConfiguration
	State                        string
}

// paginate returns the page after p.NextToken (the key of the last item of
// the previous page) of items sorted by key, and the next page's token.
func paginate[T any](all []T, p Page, key func(T) string) ([]T, string) {
	start := 0
	if p.NextToken != "" {
		start = sort.Search(len(all), func(i int) bool { return key(all[i]) > p.NextToken })
	}
	n := p.MaxResults
	if n <= 0 || n > 100 {
		n = 100
	}
	end := min(start+n, len(all))
	page := all[start:end]
	if end < len(all) {
		return page, key(all[end-1])
	}
	return page, ""
}
