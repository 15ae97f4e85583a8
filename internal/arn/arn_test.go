package arn

import (
	"errors"
	"strings"
	"testing"
)

var base = Base{Partition: "aws", Region: "us-east-1", AccountID: "123456789012"}

func TestFormat(t *testing.T) {
	tests := map[string]struct{ got, want string }{
		"SchedulingPolicy":   {base.SchedulingPolicy("sp"), "arn:aws:batch:us-east-1:123456789012:scheduling-policy/sp"},
		"ServiceEnvironment": {base.ServiceEnvironment("se"), "arn:aws:batch:us-east-1:123456789012:service-environment/se"},
		"JobQueue":           {base.JobQueue("HQ"), "arn:aws:batch:us-east-1:123456789012:job-queue/HQ"},
		"QuotaShare":         {base.QuotaShare("HQ", "QS1"), "arn:aws:batch:us-east-1:123456789012:job-queue/HQ/quota-share/QS1"},
		"ServiceJob": {base.ServiceJob("a4d6c728-1c8b-4d6e-9f55-2b0e0f6f1a11"),
			"arn:aws:batch:us-east-1:123456789012:service-job/a4d6c728-1c8b-4d6e-9f55-2b0e0f6f1a11"},
		"China": {Base{"aws-cn", "cn-north-1", "123456789012"}.JobQueue("q"), "arn:aws-cn:batch:cn-north-1:123456789012:job-queue/q"},
	}
	for name, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", name, tt.got, tt.want)
		}
	}
}

// Ensure every formatted ARN parses back to the same fields.
func TestParseRoundTrip(t *testing.T) {
	for _, b := range []Base{base, {"aws-cn", "cn-north-1", "000000000000"}, {"aws-us-gov", "us-gov-west-1", "111122223333"}} {
		for _, want := range []ARN{
			{Kind: SchedulingPolicy, Name: "sp_1"},
			{Kind: ServiceEnvironment, Name: "se-1"},
			{Kind: JobQueue, Name: "HQ"},
			{Kind: QuotaShare, Queue: "HQ", Name: "QS1"},
			{Kind: ServiceJob, Name: "a4d6c728-1c8b-4d6e-9f55-2b0e0f6f1a11"},
		} {
			want.Partition, want.Region, want.AccountID = b.Partition, b.Region, b.AccountID
			got, err := Parse(want.String())
			if err != nil {
				t.Fatalf("Parse(%s): %v", want, err)
			}
			if got != want {
				t.Errorf("Parse(%s) = %+v, want %+v", want, got, want)
			}
			if !b.Owns(got) {
				t.Errorf("%+v does not own %s", b, want)
			}
		}
	}
}

func TestParseMalformed(t *testing.T) {
	long := strings.Repeat("a", 129)
	for _, s := range []string{
		"",
		"HQ",
		"arn:aws:batch:us-east-1:123456789012",
		"arn:aws:batch:us-east-1:123456789012:job-queue",
		"arn:aws:batch:us-east-1:123456789012:job-queue/",
		"arn:aws:batch:us-east-1:123456789012:job-queue/a/b",
		"arn:aws:batch:us-east-1:123456789012:job-queue/a b",
		"arn:aws:batch:us-east-1:123456789012:job-queue/" + long,
		"arn:aws:batch:us-east-1:123456789012:job-definition/jd",
		"arn:aws:batch:us-east-1:123456789012:quota-share/QS1",
		"arn:aws:batch:us-east-1:123456789012:job-queue/HQ/quota-share/",
		"arn:aws:batch:us-east-1:123456789012:job-queue/HQ/share/QS1",
		"arn:aws:batch:us-east-1:123456789012:job-queue/HQ/quota-share/QS1/x",
		"arn:aws:batch:us-east-1:12345678901:job-queue/HQ",
		"arn:aws:batch:us-east-1:12345678901x:job-queue/HQ",
		"arn:aws:batch::123456789012:job-queue/HQ",
		"arn:aws:batch:US-EAST-1:123456789012:job-queue/HQ",
		"arn:aws-iso:batch:us-east-1:123456789012:job-queue/HQ",
		"arn:aws:sagemaker:us-east-1:123456789012:job-queue/HQ",
		"arn:aws:batch:us-east-1:123456789012:job-queue/HQ:1",
		"urn:aws:batch:us-east-1:123456789012:job-queue/HQ",
	} {
		if a, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrMalformed", s, a, err)
		}
	}
}

func TestParseKind(t *testing.T) {
	if _, err := ParseKind(base.QuotaShare("HQ", "QS1"), QuotaShare); err != nil {
		t.Fatal(err)
	}
	_, err := ParseKind(base.JobQueue("HQ"), QuotaShare)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "a job-queue ARN, not a quota-share ARN") {
		t.Errorf("ParseKind(job queue, QuotaShare) error = %v", err)
	}
}

func TestOwns(t *testing.T) {
	a, _ := Parse("arn:aws:batch:eu-west-1:123456789012:job-queue/HQ")
	if base.Owns(a) {
		t.Error("us-east-1 base owns an eu-west-1 ARN")
	}
}

func TestPartitionOf(t *testing.T) {
	for region, want := range map[string]string{
		"us-east-1": "aws", "eu-west-1": "aws", "cn-north-1": "aws-cn", "cn-northwest-1": "aws-cn",
		"us-gov-west-1": "aws-us-gov", "local": "aws",
	} {
		if got := PartitionOf(region); got != want {
			t.Errorf("PartitionOf(%s) = %s, want %s", region, got, want)
		}
	}
}

func TestValidName(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "A-b_9": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "a.b": false, "a/b": false, "é": false, "a b": false,
	} {
		if got := ValidName(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestParseError(t *testing.T) {
	_, err := Parse("arn:aws:batch:us-east-1:123:job-queue/HQ")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Reason != "account is not 12 digits" || pe.Input != "arn:aws:batch:us-east-1:123:job-queue/HQ" {
		t.Fatalf("Parse error = %#v", err)
	}
	if got, want := err.Error(), `malformed ARN "arn:aws:batch:us-east-1:123:job-queue/HQ": account is not 12 digits`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}

func TestOf(t *testing.T) {
	b := NewBase("cn-north-1", "123456789012")
	for _, c := range []struct{ got, want string }{
		{b.Of(ServiceJob, "a4d6"), "arn:aws-cn:batch:cn-north-1:123456789012:service-job/a4d6"},
		{b.Of(JobQueue, "HQ"), "arn:aws-cn:batch:cn-north-1:123456789012:job-queue/HQ"},
		{b.Of(JobQueue, "arn:aws:batch:us-east-1:000000000000:job-queue/HQ"), "arn:aws:batch:us-east-1:000000000000:job-queue/HQ"},
		{b.QuotaShareIn("HQ", "QS1"), "arn:aws-cn:batch:cn-north-1:123456789012:job-queue/HQ/quota-share/QS1"},
		{b.QuotaShareIn("arn:aws:batch:us-east-1:000000000000:job-queue/HQ", "QS1"), "arn:aws:batch:us-east-1:000000000000:job-queue/HQ/quota-share/QS1"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
