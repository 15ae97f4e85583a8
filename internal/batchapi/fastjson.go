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
	if !r.Skip('{') {
		return false
	}
	r.Space()
	if r.Skip('}') {
		return r.End()
	}
	var seen uint16
	for {
		key, ok := r.Key()
		if !ok {
			return false
		}
		var bit uint16
		switch key {
		case "jobName":
			bit, ok = 1<<0, r.StrTo(&in.JobName)
		case "jobQueue":
			bit, ok = 1<<1, r.StrTo(&in.JobQueue)
		case "serviceJobType":
			bit, ok = 1<<2, r.StrTo(&in.ServiceJobType)
		case "serviceRequestPayload":
			bit, ok = 1<<3, r.StrTo(&in.ServiceRequestPayload)
		case "quotaShareName":
			bit, ok = 1<<4, r.StrTo(&in.QuotaShareName)
		case "shareIdentifier":
			bit, ok = 1<<5, r.StrTo(&in.ShareIdentifier)
		case "clientToken":
			var s string
			bit, ok = 1<<6, r.StrTo(&s)
			in.ClientToken = &s
		case "schedulingPriority":
			var n int
			n, ok = r.Int()
			bit, in.SchedulingPriority = 1<<7, &n
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		more, ok := r.Next('}')
		if !ok {
			return false
		}
		if !more {
			return r.End()
		}
	}
}
