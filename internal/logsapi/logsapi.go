// Package logsapi serves the CloudWatch Logs operations the SageMaker
// Python SDK tails a training job's output with: DescribeLogStreams and
// GetLogEvents on the log group /aws/sagemaker/TrainingJobs, in AWS's
// awsJson1_1 shapes (package awsjson), read from the executor's logs
// (executor.LogReader).
//
// Each host of a training job (an attempt) is one log stream,
// <training job>/<host>-<epoch seconds the attempt began>, as SageMaker
// names them. A stream holds what the host wrote to stdout; its stderr is
// left out, since the two files carry no times to interleave them by
// (sharq logs and the console show both). An event is one line; the logs
// keep no time per line, so every event of a stream carries the time its
// attempt began running (its creation before then). Tokens are byte
// offsets in the stream: f/<offset> reads on from there, b/<offset> back.
// It sits on the shell side.
package logsapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/awsjson"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sagemakerapi"
)

// TargetPrefix is the X-Amz-Target prefix of CloudWatch Logs' operations.
const TargetPrefix = "Logs_20140328"

// Group is the one log group served: SageMaker training jobs'.
const Group = "/aws/sagemaker/TrainingJobs"

// maxEvents and maxBytes bound one GetLogEvents answer, as AWS does.
const (
	maxEvents = 10000
	maxBytes  = 1 << 20
)

// Engine is what the handler needs of the engine.
type Engine interface {
	AttemptJob(ctx context.Context, attemptID string) (record.Job, error)
	AttemptJobs(ctx context.Context) ([]record.Job, error)
}

// Options configure a Handler.
type Options struct {
	Region, AccountID string
	// Logs reads the attempts' output; nil when the executor keeps none
	// (every stream is then empty).
	Logs       executor.LogReader
	Authorizer access.Authorizer // default: allow all
	Logger     *slog.Logger
}

// Handler serves CloudWatch Logs' operations.
type Handler struct {
	eng  Engine
	opts Options
	base arn.Base
}

// New returns a Handler over eng.
func New(eng Engine, opts Options) *Handler {
	if opts.Authorizer == nil {
		opts.Authorizer = access.AllowAll{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{eng: eng, opts: opts, base: arn.NewBase(opts.Region, opts.AccountID)}
}

// ServeHTTP serves one operation, named by X-Amz-Target.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, op := awsjson.Target(r)
	var out any
	var err error
	switch op {
	case "DescribeLogStreams":
		out, err = h.describeStreams(r)
	case "GetLogEvents":
		out, err = h.getEvents(r)
	default:
		err = awsjson.UnknownOperation(r.Header.Get("X-Amz-Target"))
	}
	if err != nil {
		awsjson.WriteError(w, h.opts.Logger, err)
		return
	}
	awsjson.Write(w, out)
}

// groupARN is the log group's ARN, as IAM policies name it.
func (h *Handler) groupARN() string {
	return "arn:" + h.base.Partition + ":logs:" + h.base.Region + ":" + h.base.AccountID + ":log-group:" + Group
}

func invalidParameter(format string, args ...any) error {
	e := awsjson.Validation(format, args...)
	e.Code = "InvalidParameterException"
	return e
}

func resourceNotFound(msg string) error {
	return &awsjson.Error{Status: http.StatusBadRequest, Code: "ResourceNotFoundException", Message: msg}
}

// checkGroup accepts the served group, by name or identifier (its ARN).
func (h *Handler) checkGroup(name, identifier string) error {
	g := name
	if g == "" {
		g = identifier
		if _, after, ok := strings.Cut(identifier, ":log-group:"); ok {
			g = strings.TrimSuffix(after, ":*")
		}
	}
	switch {
	case g == "":
		return invalidParameter("Either logGroupName or logGroupIdentifier must be given")
	case g != Group:
		return resourceNotFound("The specified log group does not exist.")
	}
	return nil
}

type stream struct {
	name  string
	view  sagemakerapi.View
	host  string
	stamp int64 // ms: every event's time
}

// streamsOf are a training job's streams, one per host.
func streamsOf(v sagemakerapi.View) []stream {
	stamp := v.Created
	if v.Started != 0 {
		stamp = v.Started
	}
	var out []stream
	for _, host := range v.Hosts() {
		out = append(out, stream{name: v.LogStream(host), view: v, host: host, stamp: stamp})
	}
	return out
}

func (h *Handler) describeStreams(r *http.Request) (any, error) {
	var in struct {
		LogGroupName, LogGroupIdentifier string
		LogStreamNamePrefix              string
		OrderBy                          string
		Descending                       bool
		NextToken                        string
		Limit                            *int
	}
	if err := awsjson.Decode(r, &in, "InvalidParameterException"); err != nil {
		return nil, err
	}
	if err := h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.LogsAction("DescribeLogStreams"), h.groupARN()); err != nil {
		return nil, err
	}
	if err := h.checkGroup(in.LogGroupName, in.LogGroupIdentifier); err != nil {
		return nil, err
	}
	limit := 50
	switch {
	case in.Limit != nil && (*in.Limit < 1 || *in.Limit > 50):
		return nil, invalidParameter("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value between 1 and 50", *in.Limit)
	case in.Limit != nil:
		limit = *in.Limit
	}
	if in.OrderBy == "LastEventTime" && in.LogStreamNamePrefix != "" {
		return nil, invalidParameter("Cannot order by LastEventTime with a logStreamNamePrefix.")
	}
	streams, err := h.findStreams(r.Context(), in.LogStreamNamePrefix)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(streams, func(a, b stream) int {
		if in.OrderBy == "LastEventTime" && a.stamp != b.stamp {
			return int(a.stamp - b.stamp)
		}
		return strings.Compare(a.name, b.name)
	})
	if in.Descending {
		slices.Reverse(streams)
	}
	from := 0
	if in.NextToken != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(in.NextToken, "s/"))
		if err != nil || n < 0 || !strings.HasPrefix(in.NextToken, "s/") {
			return nil, invalidParameter("The specified nextToken is invalid.")
		}
		from = min(n, len(streams))
	}
	page := streams[from:min(from+limit, len(streams))]
	list := make([]map[string]any, 0, len(page))
	for _, s := range page {
		list = append(list, map[string]any{
			"logStreamName": s.name, "creationTime": s.view.Created, "firstEventTimestamp": s.stamp, "lastEventTimestamp": s.stamp,
			"lastIngestionTime": max(s.view.Modified, s.stamp), "uploadSequenceToken": "1", "storedBytes": 0,
			"arn": h.groupARN() + ":log-stream:" + s.name,
		})
	}
	out := map[string]any{"logStreams": list}
	if from+limit < len(streams) {
		out["nextToken"] = "s/" + strconv.Itoa(from+limit)
	}
	return out, nil
}

// findStreams are the streams whose names begin with prefix. A prefix
// that begins with a training job's name ("<name>/", as the SDK asks)
// finds that job alone; any other reads every training job.
func (h *Handler) findStreams(ctx context.Context, prefix string) ([]stream, error) {
	name, _, _ := strings.Cut(prefix, "/")
	var views []sagemakerapi.View
	j, err := h.eng.AttemptJob(ctx, name)
	switch {
	case err == nil:
		if v, ok := sagemakerapi.ViewOf(j, name); ok {
			views = append(views, v)
		}
	case engine.ErrorCode(err) != engine.NotFound:
		return nil, err
	case strings.Contains(prefix, "/"):
	default:
		jobs, err := h.eng.AttemptJobs(ctx)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			for _, a := range j.Attempts {
				id := a.ServiceResourceID.Value
				if v, ok := sagemakerapi.ViewOf(j, id[strings.LastIndexByte(id, '/')+1:]); ok {
					views = append(views, v)
				}
			}
		}
	}
	var out []stream
	for _, v := range views {
		for _, s := range streamsOf(v) {
			if strings.HasPrefix(s.name, prefix) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// stream finds the stream named name, or answers ResourceNotFoundException.
func (h *Handler) stream(ctx context.Context, name string) (stream, error) {
	missing := resourceNotFound("The specified log stream does not exist.")
	job, _, ok := strings.Cut(name, "/")
	if !ok {
		return stream{}, missing
	}
	j, err := h.eng.AttemptJob(ctx, job)
	if engine.ErrorCode(err) == engine.NotFound {
		return stream{}, missing
	}
	if err != nil {
		return stream{}, err
	}
	v, ok := sagemakerapi.ViewOf(j, job)
	if !ok {
		return stream{}, missing
	}
	for _, s := range streamsOf(v) {
		if s.name == name {
			return s, nil
		}
	}
	return stream{}, missing
}

type event struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
}

// line is one line of a stream, at byte offsets [start, end).
type line struct {
	start, end int64
	text       string
}

func (h *Handler) getEvents(r *http.Request) (any, error) {
	var in struct {
		LogGroupName, LogGroupIdentifier string
		LogStreamName                    string
		StartTime, EndTime               *int64
		NextToken                        string
		Limit                            *int
		StartFromHead                    *bool
	}
	if err := awsjson.Decode(r, &in, "InvalidParameterException"); err != nil {
		return nil, err
	}
	if err := h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.LogsAction("GetLogEvents"),
		h.groupARN()+":log-stream:"+in.LogStreamName); err != nil {
		return nil, err
	}
	if err := h.checkGroup(in.LogGroupName, in.LogGroupIdentifier); err != nil {
		return nil, err
	}
	limit := maxEvents
	switch {
	case in.Limit != nil && (*in.Limit < 1 || *in.Limit > maxEvents):
		return nil, invalidParameter("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value between 1 and 10000", *in.Limit)
	case in.Limit != nil:
		limit = *in.Limit
	}
	s, err := h.stream(r.Context(), in.LogStreamName)
	if err != nil {
		return nil, err
	}
	forward, offset, err := position(in.NextToken, in.StartFromHead != nil && *in.StartFromHead)
	if err != nil {
		return nil, err
	}
	var lines []line
	if forward {
		lines, err = h.readForward(r.Context(), s, offset, limit)
	} else {
		lines, err = h.readBack(r.Context(), s, offset, limit)
	}
	if err != nil {
		return nil, err
	}
	events := []event{}
	inTime := (in.StartTime == nil || s.stamp >= *in.StartTime) && (in.EndTime == nil || s.stamp < *in.EndTime)
	for _, l := range lines {
		if inTime {
			events = append(events, event{Timestamp: s.stamp, Message: l.text, IngestionTime: s.stamp})
		}
	}
	// With nothing read, the tokens stay where the request was: the SDK
	// reads again from there once more is written.
	first, last := max(offset, 0), max(offset, 0)
	if len(lines) > 0 {
		first, last = lines[0].start, lines[len(lines)-1].end
	}
	return map[string]any{"events": events,
		"nextForwardToken":  "f/" + strconv.FormatInt(last, 10),
		"nextBackwardToken": "b/" + strconv.FormatInt(first, 10)}, nil
}

// position reads a token: which way to read, and from which offset (-1:
// the end).
func position(token string, fromHead bool) (forward bool, offset int64, err error) {
	if token == "" {
		if fromHead {
			return true, 0, nil
		}
		return false, -1, nil
	}
	dir, n, ok := strings.Cut(token, "/")
	offset, perr := strconv.ParseInt(n, 10, 64)
	if !ok || perr != nil || offset < 0 || (dir != "f" && dir != "b") {
		return false, 0, invalidParameter("The specified nextToken is invalid.")
	}
	return dir == "f", offset, nil
}

// open reads the stream from offset; an empty reader when the executor
// keeps no logs of the attempt.
func (h *Handler) open(ctx context.Context, s stream, offset int64) (io.ReadCloser, error) {
	if h.opts.Logs == nil {
		return io.NopCloser(strings.NewReader("")), nil
	}
	rc, err := h.opts.Logs.Logs(ctx, s.view.Name, s.host, "stdout", offset)
	if errors.Is(err, executor.ErrNoLogs) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return rc, err
}

// scan calls fn for each line from offset on; a last line without its
// newline counts only once the attempt has ended (it may yet grow).
// fn returns false to stop.
func (h *Handler) scan(ctx context.Context, s stream, offset int64, fn func(line) bool) error {
	rc, err := h.open(ctx, s, offset)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	at := offset
	for {
		text, err := br.ReadString('\n')
		complete := strings.HasSuffix(text, "\n")
		if text != "" && (complete || (err == io.EOF && !s.view.Live)) {
			l := line{start: at, end: at + int64(len(text)), text: strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")}
			at = l.end
			if !fn(l) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readForward reads up to limit lines (and maxBytes) from offset on.
func (h *Handler) readForward(ctx context.Context, s stream, offset int64, limit int) ([]line, error) {
	var out []line
	size := 0
	err := h.scan(ctx, s, offset, func(l line) bool {
		if len(out) == limit || size+len(l.text)+26 > maxBytes {
			return false
		}
		out = append(out, l)
		size += len(l.text) + 26
		return true
	})
	return out, err
}

// readBack reads the last limit lines (and maxBytes) that end at or before
// offset (-1: the end).
func (h *Handler) readBack(ctx context.Context, s stream, offset int64, limit int) ([]line, error) {
	var out []line
	size := 0
	err := h.scan(ctx, s, 0, func(l line) bool {
		if offset >= 0 && l.end > offset {
			return false
		}
		out = append(out, l)
		size += len(l.text) + 26
		for len(out) > limit || size > maxBytes {
			size -= len(out[0].text) + 26
			out = out[1:]
		}
		return true
	})
	return out, err
}
