package sharqapi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/sharq-dev/sharq/internal/access"
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
	id := filepath.Base(j.Attempts[attempt-1].ServiceResourceID.Value)
	dir, ok := h.opts.Logs.LogPath(id)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("the logs of attempt %d of job %s are gone", attempt, j.JobID))
		return
	}
	h.sendChunk(w, filepath.Join(dir, host+"."+stream), offset)
}

// sendChunk writes up to MaxLogChunk bytes of a log from offset.
func (h *Handler) sendChunk(w http.ResponseWriter, file string, offset int64) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		w.Header().Set(HeaderNextOffset, strconv.FormatInt(offset, 10))
		return
	}
	if err != nil {
		h.opts.Logger.Error("open job log", "file", file, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		h.opts.Logger.Error("stat job log", "file", file, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
		return
	}
	n := min(max(fi.Size()-offset, 0), MaxLogChunk)
	w.Header().Set(HeaderNextOffset, strconv.FormatInt(offset+n, 10))
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	io.Copy(w, io.NewSectionReader(f, offset, n))
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
