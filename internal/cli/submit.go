package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// kvFlags collects repeated K=V flags.
type kvFlags map[string]string

func (m kvFlags) String() string { return "" }

func (m kvFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, not %q", s)
	}
	m[k] = v
	return nil
}

type submitFlags struct {
	payload, queue, share, name, instanceType string
	shareID                                   string
	count, priority, retries, preemptRetries  int
	timeout                                   time.Duration
	env                                       kvFlags
	quiet, dryRun                             bool
}

// Submit is `sharq submit`: it submits one training job, built from a
// CreateTrainingJob payload file, from flags and a command, or both (the
// flags then override the file).
func Submit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("submit", "[-- COMMAND ARGS...]",
		"Submit a training job. Without --payload, COMMAND is what the local executor runs on each instance\n"+
			"(AlgorithmSpecification.ContainerEntrypoint and ContainerArguments), as the server sees paths.",
		stdout, stderr, true)
	f := submitFlags{env: kvFlags{}}
	v.fs.StringVar(&f.payload, "payload", "", "CreateTrainingJob request (JSON) to submit; - reads stdin")
	v.fs.StringVar(&f.queue, "queue", os.Getenv("SHARQ_QUEUE"), "job queue (default $SHARQ_QUEUE; required when the server has several)")
	v.fs.StringVar(&f.share, "share", os.Getenv("SHARQ_SHARE"), "quota share (default $SHARQ_SHARE)")
	v.fs.StringVar(&f.shareID, "share-identifier", "", "share identifier, on a queue with a fair-share policy")
	v.fs.StringVar(&f.name, "name", "", "job name (default: the command's base name)")
	v.fs.StringVar(&f.instanceType, "instance-type", "", "instance type (default: the queue's only one)")
	v.fs.IntVar(&f.count, "count", 0, "instances (default 1)")
	v.fs.IntVar(&f.priority, "priority", 0, "scheduling priority 0-9999, higher first within the share (default 0)")
	v.fs.IntVar(&f.retries, "retries", 0, "times a failed attempt is retried (0-9)")
	v.fs.IntVar(&f.preemptRetries, "preemption-retries", 0, "preemptions after which the job fails (default: requeued forever)")
	v.fs.DurationVar(&f.timeout, "timeout", 0, "stop an attempt that runs longer than this (e.g. 2h; at least 60s)")
	v.fs.Var(f.env, "env", "environment variable K=V of the job (repeatable)")
	v.fs.BoolVar(&f.quiet, "q", false, "print only the job ID")
	v.fs.BoolVar(&f.dryRun, "dry-run", false, "only ask the server what would happen if the job were submitted now; changes nothing")
	command, err := v.parse(args, 0, -1)
	if err == nil {
		err = f.check(v)
	}
	if err != nil {
		return v.exit(err)
	}
	return v.exit(submit(ctx, v, &f, command))
}

// check refuses flag values out of range before anything is sent, so that
// they are usage errors (exit 2) as in every verb, not the server's
// refusal (exit 1). An omitted --priority or --preemption-retries leaves
// the server's default.
func (f *submitFlags) check(v *verb) error {
	switch {
	case v.given("priority") && (f.priority < 0 || f.priority > 9999):
		return usagef("--priority must be 0 to 9999, not %d", f.priority)
	case !v.given("priority"):
		f.priority = -1
	}
	switch {
	case v.given("preemption-retries") && f.preemptRetries < 0:
		return usagef("--preemption-retries must be at least 0, not %d", f.preemptRetries)
	case !v.given("preemption-retries"):
		f.preemptRetries = -1
	}
	if v.given("count") && f.count < 1 {
		return usagef("--count must be at least 1, not %d", f.count)
	}
	if f.retries < 0 || f.retries > 9 {
		return usagef("--retries must be 0 to 9, not %d", f.retries)
	}
	if v.given("timeout") && f.timeout < time.Minute {
		return usagef("--timeout must be at least 60s, not %s", f.timeout)
	}
	return nil
}

func submit(ctx context.Context, v *verb, f *submitFlags, command []string) error {
	if f.payload == "" && len(command) == 0 {
		return usagef("give --payload FILE or -- COMMAND ARGS...")
	}
	payload, err := readPayload(f.payload)
	if err != nil {
		return err
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	if f.queue == "" {
		if f.queue, err = c.onlyQueue(ctx); err != nil {
			return err
		}
	}
	if err := f.fill(payload, command); err != nil {
		return err
	}
	if !payload.HasInstanceType() {
		t, err := c.onlyInstanceType(ctx, f.queue)
		if err != nil {
			return err
		}
		payload.ResourceConfig.InstanceType = t
	}
	in, err := f.input(payload)
	if err != nil {
		return err
	}
	if f.dryRun {
		return dryRun(ctx, v, c, in)
	}
	var raw []byte
	out, err := c.batch.SubmitServiceJob(ctx, in, captureBody(&raw))
	if err != nil {
		return err
	}
	switch {
	case v.json():
		return printJSON(v.stdout, raw)
	case f.quiet:
		fmt.Fprintln(v.stdout, aws.ToString(out.JobId))
	default:
		where := f.queue
		if s := cmp.Or(f.share, f.shareID); s != "" {
			where += "/" + s
		}
		fmt.Fprintf(v.stdout, "submitted %s (%s) to %s\n", aws.ToString(out.JobName), aws.ToString(out.JobId), where)
	}
	return nil
}

// readPayload reads a CreateTrainingJob request, or starts an empty one.
func readPayload(file string) (*trainingjob.Request, error) {
	if file == "" {
		return &trainingjob.Request{}, nil
	}
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read payload: %w", err)
	}
	p, err := trainingjob.Parse(b)
	if err != nil {
		var pe *trainingjob.Error
		if errors.As(err, &pe) {
			err = errors.New(pe.Reason)
		}
		return nil, usagef("%s is not a JSON CreateTrainingJob request: %v", file, err)
	}
	return p, nil
}

// jobNameChars are what AWS Batch allows in a job name.
var jobNameBad = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// fill writes the flags and the command into the payload and picks the job
// name.
func (f *submitFlags) fill(p *trainingjob.Request, command []string) error {
	if len(command) > 0 {
		spec := &p.AlgorithmSpecification
		spec.ContainerEntrypoint = []string{command[0]}
		spec.ContainerArguments = append([]string{}, command[1:]...)
		if spec.TrainingInputMode == "" {
			spec.TrainingInputMode = "File"
		}
	}
	if p.ResourceConfig == nil {
		p.ResourceConfig = &trainingjob.ResourceConfig{}
	}
	rc := p.ResourceConfig
	if f.instanceType != "" {
		rc.InstanceType = f.instanceType
	}
	if f.count != 0 {
		n := f.count
		rc.InstanceCount = &n
	} else if rc.InstanceCount == nil {
		n := 1
		rc.InstanceCount = &n
	}
	if len(f.env) > 0 {
		if p.Environment == nil {
			p.Environment = map[string]string{}
		}
		for k, val := range f.env {
			p.Environment[k] = val
		}
	}
	if f.name == "" {
		f.name = defaultJobName(p.TrainingJobName, command)
	}
	if p.TrainingJobName == "" {
		p.TrainingJobName = f.name
	}
	return nil
}

// defaultJobName is the payload's TrainingJobName, else the command's base
// name, made a valid job name.
func defaultJobName(name string, command []string) string {
	if name == "" && len(command) > 0 {
		name = filepath.Base(command[0])
		// "python train.py" is better called train than python.
		for _, a := range command[1:] {
			if ext := filepath.Ext(a); ext == ".py" || ext == ".sh" {
				name = strings.TrimSuffix(filepath.Base(a), ext)
				break
			}
		}
	}
	name = strings.Trim(jobNameBad.ReplaceAllString(name, "-"), "-")
	if name == "" {
		return "job"
	}
	return truncate(name, 128)
}

// input assembles the SubmitServiceJob request.
func (f *submitFlags) input(payload *trainingjob.Request) (*batch.SubmitServiceJobInput, error) {
	b, err := payload.Marshal()
	if err != nil {
		return nil, err
	}
	in := &batch.SubmitServiceJobInput{
		JobName: aws.String(f.name), JobQueue: aws.String(f.queue), ServiceJobType: types.ServiceJobTypeSagemakerTraining,
		ServiceRequestPayload: aws.String(string(b)),
	}
	if f.share != "" {
		in.QuotaShareName = aws.String(f.share)
	}
	if f.shareID != "" {
		in.ShareIdentifier = aws.String(f.shareID)
	}
	if f.priority >= 0 {
		in.SchedulingPriority = aws.Int32(int32(f.priority))
	}
	if f.retries > 0 {
		in.RetryStrategy = &types.ServiceJobRetryStrategy{Attempts: aws.Int32(int32(f.retries + 1))}
	}
	if f.preemptRetries >= 0 {
		in.PreemptionConfiguration = &types.ServiceJobPreemptionConfiguration{PreemptionRetriesBeforeTermination: aws.Int32(int32(f.preemptRetries))}
	}
	if f.timeout != 0 {
		in.TimeoutConfig = &types.ServiceJobTimeout{AttemptDurationSeconds: aws.Int32(int32(f.timeout.Round(time.Second) / time.Second))}
	}
	return in, nil
}

// onlyQueue is the server's job queue when it has exactly one.
func (c *client) onlyQueue(ctx context.Context) (string, error) {
	out, err := c.batch.DescribeJobQueues(ctx, &batch.DescribeJobQueuesInput{})
	if err != nil {
		return "", err
	}
	switch len(out.JobQueues) {
	case 0:
		return "", usagef("the server has no job queue: create one (sharq apply -f cluster.yaml)")
	case 1:
		return aws.ToString(out.JobQueues[0].JobQueueName), nil
	}
	var names []string
	for _, q := range out.JobQueues {
		names = append(names, aws.ToString(q.JobQueueName))
	}
	return "", usagef("--queue is required: the server has %s (%s)", plural(len(names), "queue"), strings.Join(names, ", "))
}

// onlyInstanceType is the instance type of the queue's service environment
// when it has exactly one.
func (c *client) onlyInstanceType(ctx context.Context, queue string) (string, error) {
	qs, err := c.batch.DescribeJobQueues(ctx, &batch.DescribeJobQueuesInput{JobQueues: []string{queue}})
	if err != nil {
		return "", err
	}
	if len(qs.JobQueues) == 0 {
		return "", &notFoundError{"Job queue " + queue + " does not exist"}
	}
	var envs []string
	for _, o := range qs.JobQueues[0].ServiceEnvironmentOrder {
		envs = append(envs, aws.ToString(o.ServiceEnvironment))
	}
	out, err := c.batch.DescribeServiceEnvironments(ctx, &batch.DescribeServiceEnvironmentsInput{ServiceEnvironments: envs})
	if err != nil {
		return "", err
	}
	var units []string
	for _, se := range out.ServiceEnvironments {
		for _, l := range se.CapacityLimits {
			units = append(units, aws.ToString(l.CapacityUnit))
		}
	}
	if len(units) == 1 {
		return units[0], nil
	}
	return "", usagef("--instance-type is required: queue %s offers %s", queue, orDash(strings.Join(units, ", ")))
}

// atoi parses a decimal or reports a usage error naming what it is.
func atoi(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, usagef("%s must be a number, not %q", what, s)
	}
	return n, nil
}

// dryRun asks the server what the submission would do now, through the
// same scheduler code on a copy of its state, and prints the answer.
func dryRun(ctx context.Context, v *verb, c *client, in *batch.SubmitServiceJobInput) error {
	req := batchapi.SubmitServiceJobRequest{
		JobName: aws.ToString(in.JobName), JobQueue: aws.ToString(in.JobQueue), ServiceJobType: string(in.ServiceJobType),
		ServiceRequestPayload: aws.ToString(in.ServiceRequestPayload), QuotaShareName: aws.ToString(in.QuotaShareName),
		ShareIdentifier: aws.ToString(in.ShareIdentifier),
	}
	if in.SchedulingPriority != nil {
		p := int(*in.SchedulingPriority)
		req.SchedulingPriority = &p
	}
	if pc := in.PreemptionConfiguration; pc != nil && pc.PreemptionRetriesBeforeTermination != nil {
		n := int(*pc.PreemptionRetriesBeforeTermination)
		req.PreemptionConfiguration = &batchapi.JobPreemptionRequest{PreemptionRetriesBeforeTermination: &n}
	}
	out, err := sharqapi.RequestDryRun(ctx, c.http, c.base, req)
	if err != nil {
		return err
	}
	if v.json() {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return printJSON(v.stdout, b)
	}
	switch {
	case out.Dispatched:
		fmt.Fprintf(v.stdout, "would be dispatched now (%s)", out.Via)
		if len(out.Own) > 0 {
			fmt.Fprintf(v.stdout, ", own %s", usageText(out.Own))
		}
		if len(out.Borrowed) > 0 {
			fmt.Fprintf(v.stdout, ", borrowed %s", usageText(out.Borrowed))
		}
		fmt.Fprintln(v.stdout)
		for _, p := range out.Preempts {
			fate := "requeued"
			if !p.Requeued {
				fate = "failed: preemption retries exhausted"
			}
			fmt.Fprintf(v.stdout, "  would preempt %s (%s, priority %d, %s): %s\n", p.JobName, p.Share, p.Priority, p.Kind, fate)
		}
	default:
		fmt.Fprintf(v.stdout, "would wait at position %d: %s\n", out.Position, out.Reason)
	}
	return nil
}

func usageText(us []batchapi.CapacityUsage) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = fmt.Sprintf("%g × %s", u.Quantity, u.CapacityUnit)
	}
	return strings.Join(parts, ", ")
}
