// Package arn formats and parses the Amazon Resource Names of the AWS Batch
// resources sharq serves: scheduling policies, service environments, job
// queues, quota shares (nested under their job queue) and service jobs.
//
// The forms are those AWS Batch uses, e.g.
//
//	arn:aws:batch:us-east-1:123456789012:job-queue/HQ/quota-share/QS1
//	arn:aws:batch:us-east-1:123456789012:service-job/a4d6c728-...
//
// Parse accepts only these forms, in the partitions aws, aws-cn and
// aws-us-gov, so a string that parses names a resource sharq can hold.
package arn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is a resource type, as it appears in the ARN's resource part.
type Kind string

const (
	SchedulingPolicy   Kind = "scheduling-policy"
	ServiceEnvironment Kind = "service-environment"
	JobQueue           Kind = "job-queue"
	QuotaShare         Kind = "quota-share" // job-queue/<queue>/quota-share/<share>
	ServiceJob         Kind = "service-job"
)

// ErrMalformed matches (errors.Is) every error Parse returns.
var ErrMalformed = errors.New("malformed ARN")

// ParseError tells why a string is not a Batch resource ARN.
type ParseError struct {
	Input  string
	Reason string
}

func (e *ParseError) Error() string        { return fmt.Sprintf("%v %q: %s", ErrMalformed, e.Input, e.Reason) }
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// Partitions are the AWS partitions an ARN may name.
var Partitions = []string{"aws", "aws-cn", "aws-us-gov"}

// ARN is a parsed Batch resource ARN.
type ARN struct {
	Partition string
	Region    string
	AccountID string
	Kind      Kind
	// Queue is the job queue's name; set only for quota shares.
	Queue string
	// Name is the resource's name: the share's name for a quota share, the
	// job ID for a service job.
	Name string
}

// String formats the ARN.
func (a ARN) String() string {
	res := string(a.Kind) + "/" + a.Name
	if a.Kind == QuotaShare {
		res = string(JobQueue) + "/" + a.Queue + "/" + string(QuotaShare) + "/" + a.Name
	}
	return "arn:" + a.Partition + ":batch:" + a.Region + ":" + a.AccountID + ":" + res
}

// Base holds what every ARN of one sharq server shares; its methods format
// the ARN of each kind of resource.
type Base struct {
	Partition string
	Region    string
	AccountID string
}

func (b Base) arn(k Kind, queue, name string) string {
	return ARN{Partition: b.Partition, Region: b.Region, AccountID: b.AccountID, Kind: k, Queue: queue, Name: name}.String()
}

func (b Base) SchedulingPolicy(name string) string   { return b.arn(SchedulingPolicy, "", name) }
func (b Base) ServiceEnvironment(name string) string { return b.arn(ServiceEnvironment, "", name) }
func (b Base) JobQueue(name string) string           { return b.arn(JobQueue, "", name) }
func (b Base) QuotaShare(queue, share string) string { return b.arn(QuotaShare, queue, share) }
func (b Base) ServiceJob(id string) string           { return b.arn(ServiceJob, "", id) }

// TrainingJob is the ARN of the SageMaker training job an attempt runs as,
// named by the attempt.
func (b Base) TrainingJob(name string) string {
	return "arn:" + b.Partition + ":sagemaker:" + b.Region + ":" + b.AccountID + ":training-job/" + name
}

// NewBase is the Base of a server in region and account, in the region's
// partition.
func NewBase(region, accountID string) Base {
	return Base{Partition: PartitionOf(region), Region: region, AccountID: accountID}
}

// Of is the ARN of the resource of kind k that v names: v itself when it
// is an ARN, else the ARN of the name (or job ID) v under b. It checks
// nothing; it names what an operation is about to act on, for
// authorization.
func (b Base) Of(k Kind, v string) string {
	if strings.HasPrefix(v, "arn:") {
		return v
	}
	return b.arn(k, "", v)
}

// QuotaShareIn is the ARN of the share named share in the job queue that
// queue names (by name or ARN).
func (b Base) QuotaShareIn(queue, share string) string {
	if a, err := ParseKind(queue, JobQueue); err == nil {
		return ARN{Partition: a.Partition, Region: a.Region, AccountID: a.AccountID, Kind: QuotaShare, Queue: a.Name, Name: share}.String()
	}
	return b.QuotaShare(queue, share)
}

// Owns tells whether a was issued under b (same partition, region and
// account), i.e. could name one of b's resources.
func (b Base) Owns(a ARN) bool {
	return a.Partition == b.Partition && a.Region == b.Region && a.AccountID == b.AccountID
}

// PartitionOf returns the partition a region belongs to.
func PartitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// Parse parses a Batch resource ARN of one of the five kinds.
func Parse(s string) (ARN, error) {
	// arn:partition:service:region:account:resource; the resource part has
	// no colons in any of our kinds, so exactly six fields.
	f := strings.Split(s, ":")
	if len(f) != 6 || f[0] != "arn" {
		return ARN{}, malformed(s, "not of the form arn:partition:batch:region:account:resource")
	}
	a := ARN{Partition: f[1], Region: f[3], AccountID: f[4]}
	switch {
	case !slices.Contains(Partitions, a.Partition):
		return ARN{}, malformed(s, "unknown partition "+quote(a.Partition))
	case f[2] != "batch":
		return ARN{}, malformed(s, "service is not batch")
	case !isRegion(a.Region):
		return ARN{}, malformed(s, "bad region "+quote(a.Region))
	case !isAccount(a.AccountID):
		return ARN{}, malformed(s, "account is not 12 digits")
	}
	if err := a.parseResource(f[5]); err != nil {
		return ARN{}, malformed(s, err.Error())
	}
	return a, nil
}

// ParseKind parses s and requires it to be of kind k.
func ParseKind(s string, k Kind) (ARN, error) {
	a, err := Parse(s)
	if err != nil {
		return ARN{}, err
	}
	if a.Kind != k {
		return ARN{}, malformed(s, fmt.Sprintf("a %s ARN, not a %s ARN", a.Kind, k))
	}
	return a, nil
}

func (a *ARN) parseResource(res string) error {
	p := strings.Split(res, "/")
	switch {
	case len(p) == 2 && isKind(Kind(p[0])) && Kind(p[0]) != QuotaShare:
		a.Kind, a.Name = Kind(p[0]), p[1]
	case len(p) == 4 && Kind(p[0]) == JobQueue && Kind(p[2]) == QuotaShare:
		a.Kind, a.Queue, a.Name = QuotaShare, p[1], p[3]
		if !ValidName(a.Queue) {
			return errors.New("bad job queue name " + quote(a.Queue))
		}
	default:
		return errors.New("unknown resource " + quote(res))
	}
	if !ValidName(a.Name) {
		return errors.New("bad resource name " + quote(a.Name))
	}
	return nil
}

// ValidName tells whether s is a valid Batch resource name: 1 to 128
// letters, digits, hyphens and underscores. Job IDs have the same shape.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func malformed(s, why string) error { return &ParseError{Input: s, Reason: why} }

func quote(s string) string { return fmt.Sprintf("%q", s) }

func isKind(k Kind) bool {
	switch k {
	case SchedulingPolicy, ServiceEnvironment, JobQueue, QuotaShare, ServiceJob:
		return true
	}
	return false
}

// isRegion accepts lowercase letters, digits and hyphens (us-east-1,
// cn-north-1, us-gov-west-1, and test regions like local).
func isRegion(r string) bool {
	if r == "" || r[0] == '-' || r[len(r)-1] == '-' {
		return false
	}
	for _, c := range []byte(r) {
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

func isAccount(a string) bool {
	if len(a) != 12 {
		return false
	}
	for _, c := range []byte(a) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
