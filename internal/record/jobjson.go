package record

import (
	"math"
	"strconv"

	"github.com/sharq-dev/sharq/internal/jsonlite"
)

// appendJob appends the members of j's stored form (what follows
// {"v":1) as encoding/json writes them, without reflection, and reports
// whether it could: a job with a retry strategy, timeout, preemption
// configuration, tags, attempts, preemptions or attempts to wait for, or a
// quantity encoding/json would write in exponent form, is left to the
// encoder. FuzzAppendJob checks the bytes are the encoder's.
func appendJob(b []byte, j *Job) ([]byte, bool) {
	if j.RetryStrategy != nil || j.TimeoutConfig != nil || j.PreemptionConfiguration != nil || len(j.Tags) > 0 ||
		len(j.Attempts) > 0 || j.LatestAttempt != nil || j.PreemptionSummary != nil || len(j.WaitFor) > 0 {
		return b, false
	}
	for _, u := range j.CapacityUsage {
		if q := math.Abs(u.Quantity); q != 0 && (q < 1e-6 || q >= 1e21) || math.IsNaN(q) {
			return b, false
		}
	}
	b = str(b, `,"id":`, j.JobID)
	b = str(b, `,"name":`, j.JobName)
	b = str(b, `,"arn":`, j.JobArn)
	b = str(b, `,"queueArn":`, j.JobQueue)
	b = str(b, `,"type":`, j.ServiceJobType)
	b = num(b, `,"priority":`, int64(j.SchedulingPriority))
	b = optStr(b, `,"share":`, j.QuotaShareName)
	b = optStr(b, `,"shareId":`, j.ShareIdentifier)
	b = optStr(b, `,"payload":`, j.ServiceRequestPayload)
	b = append(b, `,"usage":`...)
	if j.CapacityUsage == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, u := range j.CapacityUsage {
			if i > 0 {
				b = append(b, ',')
			}
			b = str(b, `{"unit":`, u.CapacityUnit)
			b = append(b, `,"qty":`...)
			b = strconv.AppendFloat(b, u.Quantity, 'f', -1, 64)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = optStr(b, `,"clientToken":`, j.ClientToken)
	b = optStr(b, `,"owner":`, j.Owner)
	b = optStr(b, `,"requestHash":`, j.RequestHash)
	b = str(b, `,"status":`, j.Status)
	b = optStr(b, `,"reason":`, j.StatusReason)
	b = num(b, `,"createdAt":`, j.CreatedAt)
	b = optNum(b, `,"scheduledAt":`, j.ScheduledAt)
	b = optNum(b, `,"startedAt":`, j.StartedAt)
	b = optNum(b, `,"stoppedAt":`, j.StoppedAt)
	b = optNum(b, `,"endedAt":`, j.EndedAt)
	if j.IsTerminated {
		b = append(b, `,"terminated":true`...)
	}
	if len(j.History) > 0 {
		b = append(b, `,"history":[`...)
		for i, t := range j.History {
			if i > 0 {
				b = append(b, ',')
			}
			b = num(b, `{"at":`, t.At)
			b = str(b, `,"status":`, t.Status)
			b = optStr(b, `,"reason":`, t.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = str(b, `,"queue":`, j.Queue)
	b = num(b, `,"queuedAt":`, j.QueuedAt)
	b = append(b, `,"demand":`...)
	if j.Demand == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, d := range j.Demand {
			if i > 0 {
				b = append(b, ',')
			}
			b = str(b, `{"unit":`, d.Unit)
			b = num(b, `,"n":`, int64(d.Count))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = num(b, `,"entries":`, int64(j.Entries))
	b = optStr(b, `,"attemptId":`, j.AttemptID)
	b = optNum(b, `,"attemptSeq":`, int64(j.AttemptSeq))
	b = optNum(b, `,"dispatchedAt":`, j.DispatchedAt)
	b = optNum(b, `,"waitSince":`, j.WaitSince)
	return append(b, '}'), true
}

func str(b []byte, key, v string) []byte { return jsonlite.AppendString(append(b, key...), v) }

func optStr(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return str(b, key, v)
}

func num(b []byte, key string, v int64) []byte { return strconv.AppendInt(append(b, key...), v, 10) }

func optNum(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return num(b, key, v)
}
