package sagemakerapi

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/awsjson"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// TargetPrefix is the X-Amz-Target prefix of SageMaker's operations.
const TargetPrefix = "SageMaker"

// Engine is what the handler needs of the engine.
type Engine interface {
	AttemptJob(ctx context.Context, attemptID string) (record.Job, error)
	AttemptJobs(ctx context.Context) ([]record.Job, error)
	TerminateServiceJob(ctx context.Context, id, reason string) error
	TagResource(ctx context.Context, arn string, tags map[string]string) error
	ListTagsForResource(ctx context.Context, arn string) (map[string]string, error)
}

// Options configure a Handler.
type Options struct {
	Region, AccountID string
	// Authorizer decides each operation (default: allow all).
	Authorizer access.Authorizer
	Logger     *slog.Logger
}

// Handler serves SageMaker's operations.
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

// StopReason is the statusReason of a service job whose training job was
// stopped by StopTrainingJob.
const StopReason = "Stopped by StopTrainingJob"

// ServeHTTP serves one operation, named by X-Amz-Target.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, op := awsjson.Target(r)
	var out any
	var err error
	switch op {
	case "DescribeTrainingJob":
		out, err = h.describe(r)
	case "ListTrainingJobs":
		out, err = h.list(r)
	case "StopTrainingJob":
		out, err = h.stop(r)
	case "ListTags":
		out, err = h.listTags(r)
	case "AddTags":
		out, err = h.addTags(r)
	default:
		err = awsjson.UnknownOperation(r.Header.Get("X-Amz-Target"))
	}
	if err != nil {
		awsjson.WriteError(w, h.opts.Logger, err)
		return
	}
	awsjson.Write(w, out)
}

func (h *Handler) authorize(r *http.Request, op, resource string) error {
	return h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.SageMakerAction(op), resource)
}

func decode(r *http.Request, v any) error { return awsjson.Decode(r, v, "ValidationException") }

// notFound is SageMaker's answer for a training job it does not know.
func notFound() error {
	return &awsjson.Error{Status: http.StatusBadRequest, Code: "ResourceNotFound", Message: "Requested resource not found."}
}

// find returns the training job named name.
func (h *Handler) find(ctx context.Context, name string) (View, error) {
	if name == "" {
		return View{}, awsjson.Validation("1 validation error detected: Value null at 'trainingJobName' failed to satisfy constraint: Member must not be null")
	}
	j, err := h.eng.AttemptJob(ctx, name)
	if engine.ErrorCode(err) == engine.NotFound {
		return View{}, notFound()
	}
	if err != nil {
		return View{}, err
	}
	v, ok := ViewOf(j, name)
	if !ok {
		return View{}, notFound()
	}
	return v, nil
}

func (h *Handler) describe(r *http.Request) (any, error) {
	var in struct{ TrainingJobName string }
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := h.authorize(r, "DescribeTrainingJob", h.base.TrainingJob(in.TrainingJobName)); err != nil {
		return nil, err
	}
	v, err := h.find(r.Context(), in.TrainingJobName)
	if err != nil {
		return nil, err
	}
	return describeOutput(v), nil
}

// payloadFields are the CreateTrainingJob fields DescribeTrainingJob
// repeats, as the payload sent them.
var payloadFields = []string{"RoleArn", "AlgorithmSpecification", "ResourceConfig", "OutputDataConfig", "HyperParameters",
	"StoppingCondition", "CheckpointConfig", "InputDataConfig", "Environment", "VpcConfig", "EnableNetworkIsolation",
	"EnableInterContainerTrafficEncryption", "EnableManagedSpotTraining", "RetryStrategy", "DebugHookConfig",
	"TensorBoardOutputConfig", "ProfilerConfig", "RemoteDebugConfig", "InfraCheckConfig", "SessionChainingConfig"}

func describeOutput(v View) map[string]any {
	out := map[string]any{}
	var payload map[string]json.RawMessage
	if json.Unmarshal([]byte(v.Job.ServiceRequestPayload), &payload) == nil {
		for _, f := range payloadFields {
			if raw, ok := payload[f]; ok {
				out[f] = raw
			}
		}
	}
	out["TrainingJobName"] = v.Name
	out["TrainingJobArn"] = v.Arn
	out["TrainingJobStatus"] = v.Status
	out["SecondaryStatus"] = v.Secondary
	out["CreationTime"] = awsjson.Seconds(v.Created)
	out["LastModifiedTime"] = awsjson.Seconds(v.Modified)
	if v.Started != 0 {
		out["TrainingStartTime"] = awsjson.Seconds(v.Started)
	}
	if v.End != 0 {
		out["TrainingEndTime"] = awsjson.Seconds(v.End)
	}
	if v.FailureReason != "" {
		out["FailureReason"] = v.FailureReason
	}
	if m := v.ModelArtifacts(); m != "" {
		out["ModelArtifacts"] = map[string]string{"S3ModelArtifacts": m}
	}
	if v.Started != 0 && v.End != 0 {
		secs := (v.End - v.Started) / 1000
		out["TrainingTimeInSeconds"], out["BillableTimeInSeconds"] = secs, secs
	}
	ts := make([]map[string]any, 0, len(v.Transitions))
	for _, t := range v.Transitions {
		// NB: the SDK's log tail reads StatusMessage of every transition.
		e := map[string]any{"Status": t.Status, "StartTime": awsjson.Seconds(t.Start), "StatusMessage": t.Message}
		if t.End != 0 {
			e["EndTime"] = awsjson.Seconds(t.End)
		}
		ts = append(ts, e)
	}
	out["SecondaryStatusTransitions"] = ts
	return out
}

type listInput struct {
	NameContains       string
	StatusEquals       string
	CreationTimeAfter  *float64
	CreationTimeBefore *float64
	LastModifiedTimeAfter,
	LastModifiedTimeBefore *float64
	SortBy     string
	SortOrder  string
	MaxResults *int
	NextToken  string
}

func (h *Handler) list(r *http.Request) (any, error) {
	var in listInput
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := h.authorize(r, "ListTrainingJobs", access.AnyResource); err != nil {
		return nil, err
	}
	limit, err := checkList(&in)
	if err != nil {
		return nil, err
	}
	from := 0
	if in.NextToken != "" {
		if from, err = decodeToken(in.NextToken); err != nil {
			return nil, err
		}
	}
	jobs, err := h.eng.AttemptJobs(r.Context())
	if err != nil {
		return nil, err
	}
	views := filterViews(jobs, in)
	sortViews(views, in.SortBy, in.SortOrder == "Descending")
	if from > len(views) {
		from = len(views)
	}
	page := views[from:min(from+limit, len(views))]
	sums := make([]map[string]any, 0, len(page))
	for _, v := range page {
		s := map[string]any{"TrainingJobName": v.Name, "TrainingJobArn": v.Arn, "TrainingJobStatus": v.Status,
			"SecondaryStatus": v.Secondary, "CreationTime": awsjson.Seconds(v.Created), "LastModifiedTime": awsjson.Seconds(v.Modified)}
		if v.End != 0 {
			s["TrainingEndTime"] = awsjson.Seconds(v.End)
		}
		sums = append(sums, s)
	}
	out := map[string]any{"TrainingJobSummaries": sums}
	if from+limit < len(views) {
		out["NextToken"] = encodeToken(from + limit)
	}
	return out, nil
}

// checkList checks ListTrainingJobs' enums and bounds as AWS does, and
// returns the page size (default 10).
func checkList(in *listInput) (int, error) {
	in.SortBy = cmp.Or(in.SortBy, "CreationTime")
	in.SortOrder = cmp.Or(in.SortOrder, "Ascending")
	switch {
	case !slices.Contains([]string{"Name", "CreationTime", "Status"}, in.SortBy):
		return 0, awsjson.Validation("1 validation error detected: Value '%s' at 'sortBy' failed to satisfy constraint: Member must satisfy enum value set: [Name, CreationTime, Status]", in.SortBy)
	case in.SortOrder != "Ascending" && in.SortOrder != "Descending":
		return 0, awsjson.Validation("1 validation error detected: Value '%s' at 'sortOrder' failed to satisfy constraint: Member must satisfy enum value set: [Ascending, Descending]", in.SortOrder)
	case in.StatusEquals != "" && !slices.Contains([]string{InProgress, Completed, Failed, Stopping, Stopped}, in.StatusEquals):
		return 0, awsjson.Validation("1 validation error detected: Value '%s' at 'statusEquals' failed to satisfy constraint: Member must satisfy enum value set: [InProgress, Completed, Failed, Stopping, Stopped]", in.StatusEquals)
	case in.MaxResults != nil && (*in.MaxResults < 1 || *in.MaxResults > 100):
		return 0, awsjson.Validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", *in.MaxResults)
	}
	if in.MaxResults == nil {
		return 10, nil
	}
	return *in.MaxResults, nil
}

// filterViews are the training jobs of jobs that pass in's filters.
func filterViews(jobs []record.Job, in listInput) []View {
	var out []View
	contains := strings.ToLower(in.NameContains)
	for _, j := range jobs {
		for _, a := range j.Attempts {
			v, ok := ViewOf(j, a.ServiceResourceID.Value[strings.LastIndexByte(a.ServiceResourceID.Value, '/')+1:])
			switch {
			case !ok,
				contains != "" && !strings.Contains(strings.ToLower(v.Name), contains),
				in.StatusEquals != "" && v.Status != in.StatusEquals,
				!within(v.Created, in.CreationTimeAfter, in.CreationTimeBefore),
				!within(v.Modified, in.LastModifiedTimeAfter, in.LastModifiedTimeBefore):
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// within tells whether ms is after after and before before (each unset
// bound holds).
func within(ms int64, after, before *float64) bool {
	if t := awsjson.Time(after); after != nil && ms <= t.UnixMilli() {
		return false
	}
	if t := awsjson.Time(before); before != nil && ms >= t.UnixMilli() {
		return false
	}
	return true
}

// sortViews orders views by by (Name, CreationTime or Status), then by
// creation time and name, so that the order is total.
func sortViews(views []View, by string, desc bool) {
	slices.SortFunc(views, func(a, b View) int {
		var c int
		switch by {
		case "Name":
			c = cmp.Compare(a.Name, b.Name)
		case "Status":
			c = cmp.Compare(a.Status, b.Status)
		}
		c = cmp.Or(c, cmp.Compare(a.Created, b.Created), cmp.Compare(a.Name, b.Name))
		if desc {
			return -c
		}
		return c
	})
}

// A page token is the offset of the page's first item in the filtered,
// sorted list.
func encodeToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(offset)))
}

func decodeToken(tok string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil && len(b) > 1 && b[0] == 'o' {
		if n, err := strconv.Atoi(string(b[1:])); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, awsjson.Validation("Invalid pagination token")
}

func (h *Handler) stop(r *http.Request) (any, error) {
	var in struct{ TrainingJobName string }
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := h.authorize(r, "StopTrainingJob", h.base.TrainingJob(in.TrainingJobName)); err != nil {
		return nil, err
	}
	v, err := h.find(r.Context(), in.TrainingJobName)
	if err != nil {
		return nil, err
	}
	// The same rule as TerminateServiceJob: only a key that may terminate
	// the service job stops its training job.
	if err := h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), access.BatchAction("TerminateServiceJob"), v.Job.JobArn); err != nil {
		return nil, err
	}
	if !v.Live {
		return nil, awsjson.Validation("The request was rejected because the training job is in status %s.", v.Status)
	}
	if err := h.eng.TerminateServiceJob(r.Context(), v.Job.JobID, StopReason); err != nil {
		return nil, engineError(err)
	}
	return struct{}{}, nil
}

type tag struct {
	Key   string
	Value string
}

// jobOfARN is the service job a training job's ARN names.
func (h *Handler) jobOfARN(ctx context.Context, resource string) (View, error) {
	name, ok := strings.CutPrefix(resource, h.base.TrainingJob(""))
	if !ok || name == "" {
		return View{}, awsjson.Validation("%s is not the ARN of a training job of this server", resource)
	}
	return h.find(ctx, name)
}

func (h *Handler) listTags(r *http.Request) (any, error) {
	var in struct {
		ResourceArn string
		MaxResults  *int
		NextToken   string
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := h.authorize(r, "ListTags", in.ResourceArn); err != nil {
		return nil, err
	}
	v, err := h.jobOfARN(r.Context(), in.ResourceArn)
	if err != nil {
		return nil, err
	}
	tags, err := h.eng.ListTagsForResource(r.Context(), v.Job.JobArn)
	if err != nil {
		return nil, engineError(err)
	}
	keys := slices.Sorted(maps.Keys(tags))
	from := 0
	if in.NextToken != "" {
		if from, err = decodeToken(in.NextToken); err != nil {
			return nil, err
		}
	}
	limit := 50
	if in.MaxResults != nil && *in.MaxResults > 0 {
		limit = *in.MaxResults
	}
	from = min(from, len(keys))
	out := map[string]any{}
	list := []tag{}
	for _, k := range keys[from:min(from+limit, len(keys))] {
		list = append(list, tag{k, tags[k]})
	}
	out["Tags"] = list
	if from+limit < len(keys) {
		out["NextToken"] = encodeToken(from + limit)
	}
	return out, nil
}

func (h *Handler) addTags(r *http.Request) (any, error) {
	var in struct {
		ResourceArn string
		Tags        []tag
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := h.authorize(r, "AddTags", in.ResourceArn); err != nil {
		return nil, err
	}
	v, err := h.jobOfARN(r.Context(), in.ResourceArn)
	if err != nil {
		return nil, err
	}
	tags := make(map[string]string, len(in.Tags))
	for _, t := range in.Tags {
		if t.Key == "" {
			return nil, awsjson.Validation("1 validation error detected: a tag's Key must not be empty")
		}
		tags[t.Key] = t.Value
	}
	if err := h.eng.TagResource(r.Context(), v.Job.JobArn, tags); err != nil {
		return nil, engineError(err)
	}
	return map[string]any{"Tags": in.Tags}, nil
}

// engineError words an engine's refusal of a client error as SageMaker's
// ValidationException; other errors pass as they are.
func engineError(err error) error {
	switch engine.ErrorCode(err) {
	case engine.Invalid, engine.Conflict:
		return awsjson.Validation("%s", engine.ErrorMessage(err))
	case engine.NotFound:
		return notFound()
	}
	return err
}
