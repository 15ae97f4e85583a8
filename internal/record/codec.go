package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// Version is the format this release writes. Decode reads it and every
// earlier one; a later one is refused, so an older release never
// misreads a newer release's records.
const Version = 1

// Record is a stored record: a Job or one of the resources.
type Record interface {
	record()
}

func (*Job) record()                {}
func (*SchedulingPolicy) record()   {}
func (*ServiceEnvironment) record() {}
func (*JobQueue) record()           {}
func (*QuotaShare) record()         {}

// Since format 1 every document begins with its format: {"v":1,...}.
var versionKey = []byte(`{"v":`)

// Encode returns r's stored form, in this release's format.
func Encode(r Record) []byte {
	if j, ok := r.(*Job); ok {
		if b, ok := encodeJob(j); ok {
			return b
		}
	}
	return encodeReflect(r)
}

// encodeReflect is Encode through encoding/json.
func encodeReflect(r Record) []byte {
	// The encoder writes the object after the format's key in a reused
	// buffer, its '{' becoming the separating ','; the result is then
	// copied once, at its size.
	buf := encodeBufs.Get().(*bytes.Buffer)
	defer encodeBufs.Put(buf)
	buf.Reset()
	buf.Write(versionKey)
	buf.WriteString(strconv.Itoa(Version))
	at := buf.Len()
	if err := json.NewEncoder(buf).Encode(r); err != nil || buf.Len() < at+3 || buf.Bytes()[at] != '{' {
		panic(fmt.Sprintf("record: encode %T: %v", r, err)) // records hold only encodable values
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(b) == at+2 { // {}: no members besides the format
		b = append(b[:at], '}')
	} else {
		b[at] = ','
	}
	return bytes.Clone(b)
}

var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encodeJob is Encode of a job, without reflection when appendJob can.
func encodeJob(j *Job) ([]byte, bool) {
	bp := jobBufs.Get().(*[]byte)
	defer jobBufs.Put(bp)
	b := strconv.AppendInt(append((*bp)[:0], versionKey...), Version, 10)
	b, ok := appendJob(b, j)
	*bp = b[:0] // grown, for the next
	if !ok {
		return nil, false
	}
	return bytes.Clone(b), true
}

var jobBufs = sync.Pool{New: func() any { return new([]byte) }}

// version reads a document's format: 0 for the first release's, which
// had none.
func version(doc []byte) (int, error) {
	if !bytes.HasPrefix(doc, versionKey) {
		return 0, nil
	}
	rest := doc[len(versionKey):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	v, err := strconv.Atoi(string(rest[:n]))
	if err != nil {
		return 0, fmt.Errorf("record format: %w", err)
	}
	return v, nil
}

// decode reads doc into r: a document of a versioned format directly,
// the unversioned first format through legacy.
func decode(doc []byte, r Record, legacy func([]byte) error) error {
	v, err := version(doc)
	switch {
	case err != nil:
		return err
	case v == 0:
		return legacy(doc)
	case v > Version:
		return fmt.Errorf("record format %d is newer than this release's (%d): run a newer sharq", v, Version)
	}
	// json ignores the "v" key: no field takes it.
	return json.Unmarshal(doc, r)
}

// DecodeJob reads a stored job.
func DecodeJob(doc []byte) (*Job, error) {
	j := &Job{}
	return j, decode(doc, j, func(b []byte) error { return decodeJobV0(b, j) })
}

// DecodeSchedulingPolicy reads a stored scheduling policy.
func DecodeSchedulingPolicy(doc []byte) (*SchedulingPolicy, error) {
	p := &SchedulingPolicy{}
	return p, decode(doc, p, func(b []byte) error { return decodeV0(b, p, policyV0.record) })
}

// DecodeServiceEnvironment reads a stored service environment.
func DecodeServiceEnvironment(doc []byte) (*ServiceEnvironment, error) {
	se := &ServiceEnvironment{}
	return se, decode(doc, se, func(b []byte) error { return decodeV0(b, se, envV0.record) })
}

// DecodeJobQueue reads a stored job queue.
func DecodeJobQueue(doc []byte) (*JobQueue, error) {
	q := &JobQueue{}
	return q, decode(doc, q, func(b []byte) error { return decodeV0(b, q, queueV0.record) })
}

// DecodeQuotaShare reads a stored quota share.
func DecodeQuotaShare(doc []byte) (*QuotaShare, error) {
	s := &QuotaShare{}
	return s, decode(doc, s, func(b []byte) error { return decodeV0(b, s, shareV0.record) })
}
