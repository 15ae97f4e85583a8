package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/sharq-dev/sharq/internal/record"
)

// A job keeps its submission's hash: a retry of that submission after an
// upgrade must hash the same, so the values here were computed by the
// first release and never change.
func TestRequestHashIsStable(t *testing.T) {
	two, three := 2, 3
	in := SubmitServiceJobInput{JobName: "j", JobQueue: "q", ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: `{"a":1}`,
		ClientToken: "tok", QuotaShareName: "QS1", SchedulingPriority: &two,
		PreemptionConfiguration: &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: &three},
		RetryStrategy:           &record.RetryStrategy{Attempts: 3, EvaluateOnExit: []record.EvaluateOnExit{{Action: "RETRY", OnStatusReason: "x*"}}},
		TimeoutConfig:           &record.TimeoutConfig{AttemptDurationSeconds: 60}, Tags: map[string]string{"b": "1", "a": "2"}}
	for _, c := range []struct {
		in   SubmitServiceJobInput
		want string
	}{{in, "475ef4ffb43cc858"}, {SubmitServiceJobInput{JobQueue: "q"}, "b9a21dcfcc1270b2"}} {
		if got := requestHash(c.in); got != c.want {
			t.Errorf("requestHash(%+v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// requestHashByReflection is the first release's requestHash: json.Marshal
// of this struct. requestHash must hash every request as it did.
func requestHashByReflection(in SubmitServiceJobInput) string {
	type onExit struct {
		Action         string `json:"action"`
		OnStatusReason string `json:"onStatusReason,omitempty"`
	}
	type retry struct {
		Attempts       int      `json:"attempts"`
		EvaluateOnExit []onExit `json:"evaluateOnExit,omitempty"`
	}
	type timeout struct {
		AttemptDurationSeconds int `json:"attemptDurationSeconds,omitempty"`
	}
	type preemption struct {
		PreemptionRetriesBeforeTermination *int `json:"preemptionRetriesBeforeTermination,omitempty"`
	}
	h := struct {
		JobName, JobQueue, ServiceJobType, ServiceRequestPayload, ClientToken, QuotaShareName, ShareIdentifier string
		SchedulingPriority                                                                                     *int
		PreemptionConfiguration                                                                                *preemption
		RetryStrategy                                                                                          *retry
		TimeoutConfig                                                                                          *timeout
		Tags                                                                                                   map[string]string
	}{
		JobName: in.JobName, JobQueue: in.JobQueue, ServiceJobType: in.ServiceJobType, ServiceRequestPayload: in.ServiceRequestPayload,
		QuotaShareName: in.QuotaShareName, ShareIdentifier: in.ShareIdentifier, SchedulingPriority: in.SchedulingPriority, Tags: in.Tags,
	}
	if p := in.PreemptionConfiguration; p != nil {
		h.PreemptionConfiguration = &preemption{p.PreemptionRetriesBeforeTermination}
	}
	if r := in.RetryStrategy; r != nil {
		h.RetryStrategy = &retry{Attempts: r.Attempts}
		for _, e := range r.EvaluateOnExit {
			h.RetryStrategy.EvaluateOnExit = append(h.RetryStrategy.EvaluateOnExit, onExit(e))
		}
	}
	if t := in.TimeoutConfig; t != nil {
		h.TimeoutConfig = &timeout{t.AttemptDurationSeconds}
	}
	b, err := json.Marshal(h)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// FuzzRequestHash checks requestHash against json.Marshal's encoding on
// any strings (escapes, HTML characters, U+2028, invalid UTF-8) and every
// shape of the optional members.
func FuzzRequestHash(f *testing.F) {
	f.Add("j", `{"a":"<b>&\u2028"}`, "QS1", "RETRY", "x*", "k", "v", 3, uint8(0xff))
	f.Add("", "", "", "", "", "", "", 0, uint8(0))
	f.Add("a\"b\\c\n\t\r\b\f\x00\x1f\x7f", "\xff\xfe", "\u2029é", "exit", "", "", "", -1, uint8(0x55))
	f.Fuzz(func(t *testing.T, name, payload, share, action, reason, tagK, tagV string, n int, shape uint8) {
		in := SubmitServiceJobInput{JobName: name, JobQueue: tagV, ServiceJobType: action, ServiceRequestPayload: payload,
			ClientToken: reason, QuotaShareName: share, ShareIdentifier: tagK}
		if shape&1 != 0 {
			in.SchedulingPriority = &n
		}
		if shape&2 != 0 {
			in.PreemptionConfiguration = &record.JobPreemptionConfiguration{}
			if shape&4 != 0 {
				in.PreemptionConfiguration.PreemptionRetriesBeforeTermination = &n
			}
		}
		if shape&8 != 0 {
			in.RetryStrategy = &record.RetryStrategy{Attempts: n}
			if shape&16 != 0 {
				in.RetryStrategy.EvaluateOnExit = []record.EvaluateOnExit{{Action: action, OnStatusReason: reason}, {Action: name}}
			}
		}
		if shape&32 != 0 {
			in.TimeoutConfig = &record.TimeoutConfig{AttemptDurationSeconds: n}
		}
		if shape&64 != 0 {
			in.Tags = map[string]string{}
			if shape&128 != 0 {
				in.Tags[tagK], in.Tags[name], in.Tags["<"+tagV] = tagV, payload, reason
			}
		}
		if got, want := requestHash(in), requestHashByReflection(in); got != want {
			t.Errorf("requestHash(%+v) = %s, json.Marshal's encoding gives %s", in, got, want)
		}
	})
}
