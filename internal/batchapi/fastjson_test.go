package batchapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fastSeeds are bodies as clients send them, and near misses that the fast
// path must leave to encoding/json.
var fastSeeds = []string{
	`{"clientToken":"5f0c","jobName":"load-1","jobQueue":"q","quotaShareName":"s1","schedulingPriority":0,"serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":"{\"TrainingJobName\":\"load-1\",\"ResourceConfig\":{\"InstanceType\":\"ml.m5.large\",\"InstanceCount\":1}}"}`,
	` { "jobName" : "a" , "jobQueue":"arn:aws:batch:us-east-1:000000000000:job-queue/q", "shareIdentifier":"x", "schedulingPriority": 120 } `,
	`{}`,
	`{"jobName":"a\/b\\c\n\t\r\b\f\"","serviceRequestPayload":"é ü"}`,
	`{"serviceRequestPayload":"\u00e9"}`,
	`{"jobName":"a","jobName":"b"}`,
	`{"JobName":"a"}`,
	`{"jobName":null}`,
	`{"schedulingPriority":01}`,
	`{"schedulingPriority":-1}`,
	`{"schedulingPriority":1.5}`,
	`{"schedulingPriority":1e3}`,
	`{"schedulingPriority":9999999999}`,
	`{"jobName":"a"}x`,
	`{"jobName":"a",}`,
	`{"tags":{"k":"v"}}`,
	"{\"jobName\":\"\xff\"}",
	"{\"jobName\":\"a\x01\"}",
	``,
}

// FuzzDecodeFast checks that whatever the fast path reads, json.Unmarshal
// reads alike and without error.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast SubmitServiceJobRequest
		if !fast.decodeFast(body) {
			return
		}
		var slow SubmitServiceJobRequest
		if err := json.Unmarshal(body, &slow); err != nil {
			t.Fatalf("fast path read %q, which json.Unmarshal refuses: %v", body, err)
		}
		if d := cmp.Diff(slow, fast); d != "" {
			t.Fatalf("fast path read %q differently (-json.Unmarshal +fast):\n%s", body, d)
		}
	})
}

func TestDecodeFastTakesUsualBodies(t *testing.T) {
	for i, want := range []bool{true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false} {
		var in SubmitServiceJobRequest
		if got := in.decodeFast([]byte(fastSeeds[i])); got != want {
			t.Errorf("decodeFast(%q) = %v, want %v", fastSeeds[i], got, want)
		}
	}
}

// FuzzPlainOutput checks that an answer plainOutput writes is what
// writeOutput's encoder would write.
func FuzzPlainOutput(f *testing.F) {
	f.Add("arn:aws:batch:us-east-1:000000000000:service-job/0190d8a2-7b3c-7def-8123-456789abcdef", "0190d8a2-7b3c-7def-8123-456789abcdef", "load-1")
	f.Add("a<b>&c", "\"", "é")
	f.Add("\x7f", "\\", "\n")
	f.Fuzz(func(t *testing.T, arn, id, name string) {
		ref := jobRef{arn, id, name}
		got, ok := plainOutput(ref)
		if !ok {
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ref); err != nil {
			t.Fatal(err)
		}
		if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("plainOutput(%#v) = %s, want %s", ref, got, want)
		}
	})
}
