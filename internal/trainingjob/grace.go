package trainingjob

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// StopGraceEnv is the payload environment variable that sets the job's
// grace period: the time between SIGTERM (or the backend's equivalent) and
// a hard kill when the job is stopped, overriding the server's default.
const StopGraceEnv = "SHARQ_STOP_GRACE_SECONDS"

// StopGrace is the grace period the payload sets through StopGraceEnv, a
// number of seconds; ok is false when it sets none. A value that is not a
// number of seconds within a time.Duration is an *Error.
func (r *Request) StopGrace() (grace time.Duration, ok bool, err error) {
	v, ok := r.Environment[StopGraceEnv]
	if !ok {
		return 0, false, nil
	}
	// NaN, infinities and values beyond a time.Duration would convert to
	// a negative duration.
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(secs >= 0) || secs > math.MaxInt64/float64(time.Second) {
		return 0, false, refusef("Environment.%s=%q is not a number of seconds", StopGraceEnv, v)
	}
	return time.Duration(secs * float64(time.Second)), true, nil
}
