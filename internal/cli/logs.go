package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// hostPattern is the instance names the local executor gives.
var hostPattern = regexp.MustCompile(`^algo-[1-9][0-9]*$`)

type logsFlags struct {
	follow  bool
	attempt int
	host    string
	stream  string
}

// logStream is one of the job's output streams and where it goes.
type logStream struct {
	name   string // stdout or stderr
	w      io.Writer
	offset int64
}

// logHead is what the server says of the job along with a chunk.
type logHead struct {
	attempt, attempts int
	status            string
}

// Logs is `sharq logs JOB [-f]`: a job's output, its stdout to stdout and
// its stderr to stderr, every attempt's in turn under a header (or the one
// --attempt names). With -f it follows the output, on to later attempts
// when the job is preempted or retried, until the job ends.
func Logs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("logs", "JOB", "Print a job's output, every attempt's under a header (from the local executor).", stdout, stderr, false)
	var f logsFlags
	v.fs.BoolVar(&f.follow, "f", false, "follow the output until the job ends")
	v.fs.IntVar(&f.attempt, "attempt", 0, "the one attempt to show, 1 for the first (default: all of them)")
	v.fs.StringVar(&f.host, "host", "algo-1", "instance of a multi-instance job: algo-1, algo-2, ...")
	v.fs.StringVar(&f.stream, "stream", "both", "stdout, stderr or both")
	pos, err := v.parse(args, 1, 1)
	if err != nil {
		return v.exit(err)
	}
	return v.exit(logs(ctx, v, pos[0], f))
}

func logs(ctx context.Context, v *verb, ref string, f logsFlags) error {
	var streams []*logStream
	switch f.stream {
	case "both":
		streams = []*logStream{{name: "stdout", w: v.stdout}, {name: "stderr", w: v.stderr}}
	case "stdout":
		streams = []*logStream{{name: "stdout", w: v.stdout}}
	case "stderr":
		streams = []*logStream{{name: "stderr", w: v.stderr}}
	default:
		return usagef("--stream must be stdout, stderr or both, not %q", f.stream)
	}
	if !hostPattern.MatchString(f.host) {
		return usagef("--host must be algo-N, not %q", f.host)
	}
	if f.attempt < 0 {
		return usagef("--attempt must be 1 or more, not %d", f.attempt)
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return err
	}
	t := &logTail{c: c, id: id, host: f.host, streams: streams, cur: f.attempt, stderr: v.stderr}
	if f.attempt == 0 {
		// All attempts: from the first, once there is one.
		if t.cur, err = t.first(ctx); err != nil {
			return err
		}
	}
	return t.run(ctx, f.follow, f.attempt == 0)
}

// logTail copies one job's logs, attempt by attempt.
type logTail struct {
	c       *client
	id      string
	host    string
	streams []*logStream
	cur     int // the attempt shown; 0 until the server names the latest
	stderr  io.Writer
	// headers makes every attempt's output start with a header, not only
	// those of a job with several attempts; announced is the attempt whose
	// header is out.
	headers   bool
	announced int
}

// run copies what is there, and with follow waits for more. onward lets it
// go on to newer attempts. Each attempt's output is preceded by a header
// when the job has several attempts or is followed (it may come to have
// several): the header goes out before the attempt's first byte.
func (t *logTail) run(ctx context.Context, follow, onward bool) error {
	t.headers = follow
	for {
		head, progressed, err := t.round(ctx)
		if err != nil {
			return err
		}
		if head.attempt == 0 && !follow {
			fmt.Fprintf(t.stderr, "job %s has not started an attempt yet (%s)\n", t.id, head.status)
			return nil
		}
		if progressed {
			continue // a full chunk may have more behind it
		}
		switch {
		case !follow:
			if t.cur > 0 && head.attempts > 1 {
				t.announce(head.attempts) // an attempt with no output
			}
			if onward && t.cur > 0 && head.attempts > t.cur {
				t.next()
				continue
			}
			return nil
		case onward && t.cur > 0 && head.attempts > t.cur:
			t.announce(head.attempts) // an attempt with no output
			t.next()
			continue
		case ended(types.ServiceJobStatus(head.status)):
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // following ends when the person stops it
		case <-time.After(pollInterval):
		}
	}
}

// first is 1 when the job has an attempt, else 0: it asks for the latest
// attempt's log and reads only what the server says of the job.
func (t *logTail) first(ctx context.Context) (int, error) {
	q := url.Values{"host": {t.host}, "stream": {t.streams[0].name}}
	resp, err := t.c.sharqGet(ctx, "/sharq/v1/jobs/"+url.PathEscape(t.id)+"/logs", q)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	if n, _ := strconv.Atoi(resp.Header.Get(sharqapi.HeaderAttempts)); n > 0 {
		return 1, nil
	}
	return 0, nil
}

// next goes on to the next attempt, from its start.
func (t *logTail) next() {
	t.cur++
	for _, s := range t.streams {
		s.offset = 0
	}
}

// announce prints the current attempt's header once.
func (t *logTail) announce(attempts int) {
	if t.announced == t.cur {
		return
	}
	t.announced = t.cur
	if t.headers {
		// Followed, the job may have more attempts to come than it has now.
		fmt.Fprintf(t.stderr, "==> attempt %d <==\n", t.cur)
		return
	}
	fmt.Fprintf(t.stderr, "==> attempt %d of %d <==\n", t.cur, attempts)
}

// round reads one chunk of each stream and tells whether any had bytes.
func (t *logTail) round(ctx context.Context) (logHead, bool, error) {
	var head logHead
	progressed := false
	for _, s := range t.streams {
		h, n, err := t.chunk(ctx, s)
		if err != nil {
			return head, false, err
		}
		head = h
		progressed = progressed || n > 0
	}
	return head, progressed, nil
}

// chunk copies the next bytes of one stream.
func (t *logTail) chunk(ctx context.Context, s *logStream) (logHead, int64, error) {
	q := url.Values{"host": {t.host}, "stream": {s.name}, "offset": {strconv.FormatInt(s.offset, 10)}}
	if t.cur > 0 {
		q.Set("attempt", strconv.Itoa(t.cur))
	}
	resp, err := t.c.sharqGet(ctx, "/sharq/v1/jobs/"+url.PathEscape(t.id)+"/logs", q)
	if err != nil {
		return logHead{}, 0, err
	}
	defer resp.Body.Close()
	h := logHead{status: resp.Header.Get(sharqapi.HeaderJobStatus)}
	h.attempt, _ = strconv.Atoi(resp.Header.Get(sharqapi.HeaderAttempt))
	h.attempts, _ = strconv.Atoi(resp.Header.Get(sharqapi.HeaderAttempts))
	if t.cur == 0 && h.attempt > 0 {
		t.cur = h.attempt
	}
	w := s.w
	if t.headers || h.attempts > 1 {
		w = firstWrite{s.w, func() { t.announce(h.attempts) }}
	}
	n, err := io.Copy(w, resp.Body)
	s.offset += n
	return h, n, err
}

// firstWrite calls before ahead of every write; before acts only once.
type firstWrite struct {
	w      io.Writer
	before func()
}

func (f firstWrite) Write(p []byte) (int, error) {
	f.before()
	return f.w.Write(p)
}
