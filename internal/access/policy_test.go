package access_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

const (
	queue = "arn:aws:batch:us-east-1:000000000000:job-queue/jq"
	qs1   = queue + "/quota-share/QS1"
	qs2   = queue + "/quota-share/QS2"
	jobA  = "arn:aws:batch:us-east-1:000000000000:service-job/job-a" // in QS1
	jobB  = "arn:aws:batch:us-east-1:000000000000:service-job/job-b" // in QS2
)

// teamA is the example: team A's key submits, updates and
// terminates only in QS1, and reads everything.
var teamA = access.PolicyDocument{Statement: []access.Statement{
	{Effect: "Allow", Action: []string{"batch:SubmitServiceJob", "batch:UpdateServiceJob", "batch:TerminateServiceJob"},
		Resource: []string{qs1, "arn:aws:batch:*:*:service-job/*"}},
	{Effect: "Allow", Action: []string{"batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"}, Resource: []string{"*"}},
}}

// Ensure policies allow and deny as IAM's would, with the default that a
// key touches only jobs in shares it may submit to.
func TestPolicyAuthorizer(t *testing.T) {
	ctx := t.Context()
	keys := &accesstest.Keys{}
	doc, _ := json.Marshal(teamA)
	keys.PutPolicy(ctx, access.Policy{Name: "team-a", Document: doc})
	noQS2, _ := json.Marshal(access.PolicyDocument{Statement: []access.Statement{
		{Effect: "Deny", Action: []string{"batch:*"}, Resource: []string{qs2}}}})
	keys.PutPolicy(ctx, access.Policy{Name: "no-qs2", Document: noQS2})
	tj, _ := json.Marshal(access.PolicyDocument{Statement: []access.Statement{
		{Effect: "Allow", Action: []string{"sagemaker:DescribeTrainingJob"}, Resource: []string{"arn:aws:sagemaker:*:*:training-job/*"}},
		{Effect: "Allow", Action: []string{"logs:GetLogEvents"}, Resource: []string{"arn:aws:logs:*:*:log-group:/aws/sagemaker/TrainingJobs:*"}}}})
	keys.PutPolicy(ctx, access.Policy{Name: "tj", Document: tj})
	for _, k := range []access.StoredKey{
		{ID: "A", Name: "team-a", Policies: []string{"team-a"}},
		{ID: "ADMIN", Name: "admin", Policies: []string{"AdministratorAccess", "no-qs2"}},
		{ID: "RO", Name: "reader", Policies: []string{"ReadOnlyAccess", "not-applied-yet"}},
		{ID: "TJ", Name: "tj", Policies: []string{"tj"}},
	} {
		keys.CreateKey(ctx, k)
	}
	authz := &access.PolicyAuthorizer{Keys: keys, JobShare: func(_ context.Context, job string) (string, error) {
		switch job {
		case jobA:
			return qs1, nil
		case jobB:
			return qs2, nil
		}
		return "", fmt.Errorf("job %s: %w", job, access.ErrNotFound)
	}}
	for name, tc := range map[string]struct {
		key, action, resource string
		want                  string // "" allowed, else the error's start
	}{
		"SubmitOwnShare":        {"A", "batch:SubmitServiceJob", qs1, ""},
		"SubmitOtherShare":      {"A", "batch:SubmitServiceJob", qs2, "User: arn:aws:iam::000000000000:user/team-a is not authorized to perform: batch:SubmitServiceJob on resource: " + qs2 + " because no identity-based policy allows"},
		"TerminateOwnJob":       {"A", "batch:TerminateServiceJob", jobA, ""},
		"TerminateOtherJob":     {"A", "batch:TerminateServiceJob", jobB, "User: arn:aws:iam::000000000000:user/team-a is not authorized to perform: batch:TerminateServiceJob on resource: " + jobB + " because the job is in " + qs2},
		"UpdateOtherJob":        {"A", "batch:UpdateServiceJob", jobB, "User: arn:aws:iam::000000000000:user/team-a is not authorized"},
		"UpdateMissingJob":      {"A", "batch:UpdateServiceJob", "arn:aws:batch:us-east-1:000000000000:service-job/nope", ""},
		"ChangeShare":           {"A", "batch:UpdateQuotaShare", qs1, "User: arn:aws:iam::000000000000:user/team-a is not authorized"},
		"ReadAnything":          {"A", "batch:DescribeServiceJob", jobB, ""},
		"ReadCaseFolded":        {"A", "BATCH:listservicejobs", "*", ""},
		"SharqRead":             {"A", "sharq:GetShareUsage", "*", ""},
		"AdminAnything":         {"ADMIN", "batch:DeleteJobQueue", queue, ""},
		"AdminExplicitDeny":     {"ADMIN", "batch:UpdateQuotaShare", qs2, "User: arn:aws:iam::000000000000:user/admin is not authorized to perform: batch:UpdateQuotaShare on resource: " + qs2 + " because an explicit deny"},
		"AdminTerminateInQS2":   {"ADMIN", "batch:TerminateServiceJob", jobB, "User: arn:aws:iam::000000000000:user/admin is not authorized"},
		"ReaderReads":           {"RO", "batch:ListQuotaShares", queue, ""},
		"ReaderSubmits":         {"RO", "batch:SubmitServiceJob", qs1, "User: arn:aws:iam::000000000000:user/reader is not authorized"},
		"ReaderTrainingJob":     {"RO", "sagemaker:DescribeTrainingJob", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", ""},
		"ReaderLogs":            {"RO", "logs:GetLogEvents", "arn:aws:logs:us-east-1:000000000000:log-group:/aws/sagemaker/TrainingJobs:log-stream:tj/algo-1-1", ""},
		"ReaderStopsTraining":   {"RO", "sagemaker:StopTrainingJob", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", "User: arn:aws:iam::000000000000:user/reader is not authorized"},
		"ReaderTags":            {"RO", "sagemaker:AddTags", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", "User: arn:aws:iam::000000000000:user/reader is not authorized"},
		"TeamReadsNoTraining":   {"A", "sagemaker:DescribeTrainingJob", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", "User: arn:aws:iam::000000000000:user/team-a is not authorized"},
		"AdminStopsTraining":    {"ADMIN", "sagemaker:StopTrainingJob", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", ""},
		"PolicyTrainingJob":     {"TJ", "sagemaker:DescribeTrainingJob", "arn:aws:sagemaker:us-east-1:000000000000:training-job/tj", ""},
		"PolicyLogStream":       {"TJ", "logs:GetLogEvents", "arn:aws:logs:us-east-1:000000000000:log-group:/aws/sagemaker/TrainingJobs:log-stream:tj/algo-1-1", ""},
		"PolicyNoListing":       {"TJ", "sagemaker:ListTrainingJobs", "*", "User: arn:aws:iam::000000000000:user/tj is not authorized"},
		"PolicyOtherGroup":      {"TJ", "logs:GetLogEvents", "arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/f:log-stream:s", "User: arn:aws:iam::000000000000:user/tj is not authorized"},
		"DeletedKeyAllowedNone": {"GONE", "batch:ListServiceJobs", "*", "User: arn:aws:iam::000000000000:user/gone is not authorized"},
	} {
		t.Run(name, func(t *testing.T) {
			id := access.Identity{AccessKeyID: tc.key, Principal: access.UserARN("000000000000", strings.ToLower(map[string]string{"A": "team-a", "ADMIN": "admin", "RO": "reader", "TJ": "tj", "GONE": "gone"}[tc.key]))}
			err := authz.Authorize(ctx, id, tc.action, tc.resource)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
			if _, ok := errors.AsType[*access.DeniedError](err); err != nil && !ok {
				t.Errorf("not a DeniedError: %T", err)
			}
		})
	}
	if err := authz.Authorize(ctx, access.Anonymous, "batch:ListServiceJobs", "*"); err == nil || !strings.HasPrefix(err.Error(), "MissingAuthenticationTokenException") {
		t.Errorf("anonymous: %v", err)
	}
	// With AnonymousRead, unsigned callers read and still write nothing.
	authz.AnonymousRead = true
	if err := authz.Authorize(ctx, access.Anonymous, "sharq:GetConsoleState", "*"); err != nil {
		t.Errorf("anonymous read: %v", err)
	}
	if err := authz.Authorize(ctx, access.Anonymous, "batch:UpdateServiceJob", jobA); err == nil || !strings.HasPrefix(err.Error(), "MissingAuthenticationTokenException") {
		t.Errorf("anonymous write with AnonymousRead: %v", err)
	}
	// Nor do they read the built-in S3's objects, which ReadOnlyAccess
	// gives a key.
	for _, action := range []string{"s3:GetObject", "s3:ListBucket", "s3:ListAllMyBuckets"} {
		if err := authz.Authorize(ctx, access.Anonymous, action, "arn:aws:s3:::team-a/data.csv"); err == nil {
			t.Errorf("anonymous %s with AnonymousRead was allowed", action)
		}
	}
}

func TestGlob(t *testing.T) {
	doc := func(res string) access.PolicyDocument {
		return access.PolicyDocument{Statement: []access.Statement{{Effect: "Allow", Action: []string{"x:*"}, Resource: []string{res}}}}
	}
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*/quota-share/QS1", qs1, true}, {"*/quota-share/QS1", qs1 + "0", false}, {"**a", "bba", true}, {"arn", "ARN", false},
	} {
		keys := &accesstest.Keys{}
		b, _ := json.Marshal(doc(tc.pattern))
		keys.PutPolicy(t.Context(), access.Policy{Name: "p", Document: b})
		keys.CreateKey(t.Context(), access.StoredKey{ID: "K", Name: "k", Policies: []string{"p"}})
		err := (&access.PolicyAuthorizer{Keys: keys}).Authorize(t.Context(), access.Identity{AccessKeyID: "K"}, "x:y", tc.s)
		if (err == nil) != tc.want {
			t.Errorf("%q matching %q: %v, want %v", tc.pattern, tc.s, err, tc.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	for name, doc := range map[string]string{
		"NoStatement": `{"Statement":[]}`,
		"BadEffect":   `{"Statement":[{"Effect":"Maybe","Action":["*"],"Resource":["*"]}]}`,
		"NoAction":    `{"Statement":[{"Effect":"Allow","Resource":["*"]}]}`,
		"BareAction":  `{"Statement":[{"Effect":"Allow","Action":["Submit"],"Resource":["*"]}]}`,
		"NoResource":  `{"Statement":[{"Effect":"Allow","Action":["*"]}]}`,
		"NotJSON":     `{`,
	} {
		if _, err := access.ParsePolicy([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
