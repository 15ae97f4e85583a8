package sharqapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strconv"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/executor"
)

// hostName is an instance name as the local executor gives them.
var hostName = regexp.MustCompile(`^algo-[0-9]+$`)

// logs answers one chunk of one attempt's log: ?attempt=N (1-based, default
// the latest), host (default algo-1), stream (stdout or stderr, default
// stdout) and offset (default 0). A job without an attempt yet, or a log
// not written yet, answers no bytes: a follower asks again.
func (h *Handler) logs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	host, stream := orDefault(q.Get("host"), "algo-1"), orDefault(q.Get("stream"), "stdout")
	if !hostName.MatchString(host) || (stream != "stdout" && stream != "stderr") {
		writeError(w, http.StatusBadRequest, "host must be algo-N and stream stdout or stderr")
		return
	}
	offset, err1 := intParam(q.Get("offset"))
	a, err2 := intParam(q.Get("attempt"))
	attempt := int(a)
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !h.authorize(w, r, access.ActionGetLogs, h.jobARN(r)) {
		return
	}
	if h.opts.Logs == nil {
		writeError(w, http.StatusNotImplemented, "this server's executor keeps no job logs (only the local executor does)")
		return
	}
	j, err := h.eng.DescribeServiceJob(r.Context(), r.PathValue("job"))
	if err != nil {
		h.engineError(w, err)
		return
	}
	n := len(j.Attempts)
	if attempt == 0 {
		attempt = n
	}
	if attempt > n {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %s has %d attempts, not %d", j.JobID, n, attempt))
		return
	}
	w.Header().Set(HeaderAttempts, strconv.Itoa(n))
	w.Header().Set(HeaderAttempt, strconv.Itoa(attempt))
	w.Header().Set(HeaderJobStatus, j.Status)
	w.Header().Set("Content-Type", "application/octet-stream")
	if attempt == 0 {
		w.Header().Set(HeaderNextOffset, "0")
		return
	}
	// The attempt's ID is its training job's name, the last part of the ARN.
	id := path.Base(j.Attempts[attempt-1].ServiceResourceID.Value)
	log, err := h.opts.Logs.Logs(r.Context(), id, host, stream, offset)
	if errors.Is(err, executor.ErrNoLogs) && j.Attempts[attempt-1].StoppedAt == 0 {
		// An attempt just dispatched has written nothing yet.
		w.Header().Set(HeaderNextOffset, strconv.FormatInt(offset, 10))
		return
	}
	if errors.Is(err, executor.ErrNoLogs) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("the logs of attempt %d of job %s are gone", attempt, j.JobID))
		return
	}
	if err != nil {
		h.opts.Logger.Error("open job log", "attempt", id, "host", host, "stream", stream, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
		return
	}
	defer log.Close()
	h.sendChunk(w, log, offset)
}

// sendChunk writes up to MaxLogChunk bytes of a log, read from offset on.
func (h *Handler) sendChunk(w http.ResponseWriter, log io.Reader, offset int64) {
	chunk, err := io.ReadAll(io.LimitReader(log, MaxLogChunk))
	if err != nil {
		h.opts.Logger.Error("read job log", "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
		return
	}
	n := int64(len(chunk))
	w.Header().Set(HeaderNextOffset, strconv.FormatInt(offset+n, 10))
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.Write(chunk)
}

func intParam(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
