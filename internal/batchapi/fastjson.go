package batchapi

import "github.com/sharq-dev/sharq/internal/jsonlite"

// decodeFast reads the usual SubmitServiceJob body (a flat object of the
// string members and schedulingPriority, each once, keys as the SDKs
// write them, no \u escapes) without reflection, and reports whether it
// could. Anything else, an error included, is left to decodeJSON, so the
// answers stay encoding/json's; on true, in holds what json.Unmarshal
// would have decoded (FuzzDecodeFast checks it).
func (in *SubmitServiceJobRequest) decodeFast(body []byte) bool {
	r := jsonlite.Reader{B: body}
	r.Space()
	var seen uint16
	return r.Each('{', '}', func() bool {
		i, ok := r.Member(submitFields)
		if !ok || i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		switch submitFields[i] {
		case "jobName":
			return r.StrTo(&in.JobName)
		case "jobQueue":
			return r.StrTo(&in.JobQueue)
		case "serviceJobType":
			return r.StrTo(&in.ServiceJobType)
		case "serviceRequestPayload":
			return r.StrTo(&in.ServiceRequestPayload)
		case "quotaShareName":
			return r.StrTo(&in.QuotaShareName)
		case "shareIdentifier":
			return r.StrTo(&in.ShareIdentifier)
		case "clientToken":
			var s string
			in.ClientToken = &s
			return r.StrTo(&s)
		}
		var n int // schedulingPriority
		n, ok = r.Int()
		in.SchedulingPriority = &n
		return ok
	}) && r.End()
}

// submitFields are the members decodeFast reads.
var submitFields = []string{"jobName", "jobQueue", "serviceJobType", "serviceRequestPayload", "quotaShareName", "shareIdentifier", "clientToken", "schedulingPriority"}

// plainOutput writes the answer of SubmitServiceJob and UpdateServiceJob
// without reflection when its strings need no escape, as writeOutput's
// encoder would; false leaves out to the encoder.
func plainOutput(out any) ([]byte, bool) {
	ref, ok := out.(jobRef)
	if !ok || !plainString(ref.JobArn) || !plainString(ref.JobID) || !plainString(ref.JobName) {
		return nil, false
	}
	b := make([]byte, 0, len(`{"jobArn":"","jobId":"","jobName":""}`)+len(ref.JobArn)+len(ref.JobID)+len(ref.JobName))
	b = append(b, `{"jobArn":"`...)
	b = append(b, ref.JobArn...)
	b = append(b, `","jobId":"`...)
	b = append(b, ref.JobID...)
	b = append(b, `","jobName":"`...)
	b = append(b, ref.JobName...)
	return append(b, `"}`...), true
}

// plainString tells whether encoding/json writes s as it is, in quotes:
// printable ASCII without quotes or backslashes (the encoder does not
// escape HTML here).
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
