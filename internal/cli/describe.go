package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// jobDetail is everything `sharq describe` shows of a job.
type jobDetail struct {
	job      *batch.DescribeServiceJobOutput
	raw      []byte // the DescribeServiceJob answer as the server sent it
	position sharqapi.Position
	events   []batchapi.Event
	names    map[string]string // names of the jobs that reasons mention
	// instances tells, by attempt, where each instance runs, when the
	// server's executor can tell (the kube executor's pods and nodes).
	instances [][]sharqapi.Placement
}

// Describe is `sharq describe JOB`: a job's settings, where it stands and
// its history as a timeline of attempts and preemptions.
func Describe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("describe", "JOB", "Show a job and its timeline. JOB is a job ID, ARN or name (the newest job of that name).",
		stdout, stderr, true)
	pos, err := v.parse(args, 1, 1)
	if err != nil {
		return v.exit(err)
	}
	return v.exit(describe(ctx, v, pos[0]))
}

func describe(ctx context.Context, v *verb, ref string) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	id, err := c.resolveJob(ctx, ref)
	if err != nil {
		return err
	}
	d, err := c.jobDetail(ctx, id)
	if err != nil {
		return err
	}
	if v.json() {
		out := map[string]any{"job": json.RawMessage(d.raw), "position": d.position, "events": d.events}
		if d.instances != nil {
			out["instances"] = d.instances
		}
		return printJSON(v.stdout, out)
	}
	return writeDetail(v.stdout, d)
}

func (c *client) jobDetail(ctx context.Context, id string) (*jobDetail, error) {
	d := &jobDetail{}
	var err error
	if d.job, err = c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)}, captureBody(&d.raw)); err != nil {
		return nil, err
	}
	var pos sharqapi.Positions
	if err := c.postJSON(ctx, "/sharq/v1/jobs/positions", sharqapi.PositionsRequest{JobIDs: []string{id}}, &pos); err != nil {
		return nil, err
	}
	if len(pos.Jobs) == 1 {
		d.position = pos.Jobs[0]
	}
	var evs sharqapi.JobEvents
	if err := c.getJSON(ctx, "/sharq/v1/jobs/"+url.PathEscape(id)+"/events", nil, &evs); err != nil {
		return nil, err
	}
	d.events = evs.Events
	// Only some executors tell where instances run, and a caller may not
	// read the console's view: the pods are shown when they can be.
	var jd sharqapi.JobPlacements
	if c.getJSON(ctx, "/sharq/v1/console/jobs/"+url.PathEscape(id), nil, &jd) == nil {
		d.instances = jd.Instances
	}
	texts := []string{aws.ToString(d.job.StatusReason)}
	for _, ev := range d.events {
		texts = append(texts, ev.Detail.StatusReason)
	}
	d.names = c.jobNames(ctx, texts)
	return d, nil
}

// jobNames looks up the names of the jobs the texts mention. A job that
// cannot be described keeps its ID: the name only helps.
func (c *client) jobNames(ctx context.Context, texts []string) map[string]string {
	names := map[string]string{}
	for _, t := range texts {
		for _, id := range jobIDPattern.FindAllString(t, -1) {
			if _, done := names[id]; done {
				continue
			}
			if j, err := c.batch.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)}); err == nil {
				names[id] = aws.ToString(j.JobName)
			}
		}
	}
	return names
}

func writeDetail(w io.Writer, d *jobDetail) error {
	j, p := d.job, d.position
	t := newTable(w)
	field := func(k, v string) {
		if v != "" {
			t.row(k+":", v)
		}
	}
	field("Name", aws.ToString(j.JobName))
	field("ID", aws.ToString(j.JobId))
	field("Queue", p.Queue)
	field("Share", aws.ToString(j.QuotaShareName))
	field("Status", string(j.Status))
	if p.Place > 0 {
		field("Position", fmt.Sprintf("%d in share %s", p.Place, orDash(p.Share)))
	}
	field("Reason", nameJobs(aws.ToString(j.StatusReason), d.names))
	if p.Place > 0 {
		field("Starts", etaLine(p.ETA))
	}
	field("Priority", strconv.Itoa(int(aws.ToInt32(j.SchedulingPriority))))
	var cs []capacity
	for _, u := range j.CapacityUsage {
		cs = append(cs, capacity{aws.ToString(u.CapacityUnit), aws.ToFloat64(u.Quantity)})
	}
	field("Instances", instances(cs))
	field("Capacity", holdingText(p.Holding))
	field("Created", when(aws.ToInt64(j.CreatedAt)))
	field("Started", when(aws.ToInt64(j.StartedAt)))
	field("Stopped", when(aws.ToInt64(j.StoppedAt)))
	field("Limits", limits(j))
	field("Attempts", attemptsLine(j))
	if la := j.LatestAttempt; la != nil && la.ServiceResourceId != nil {
		loc := optml.LocationsOf(aws.ToString(j.ServiceRequestPayload), aws.ToString(la.ServiceResourceId.Value))
		if j.Status == types.ServiceJobStatusSucceeded {
			field("Model", loc.Model)
		}
		field("Checkpoints", loc.Checkpoints)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if err := writePods(w, d.instances); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Timeline:")
	return writeTimeline(w, aws.ToInt64(j.CreatedAt), d.events, d.names)
}

// writePods lists each attempt's pods and their nodes, when the server
// told them.
func writePods(w io.Writer, instances [][]sharqapi.Placement) error {
	some := false
	for _, l := range instances {
		some = some || len(l) > 0
	}
	if !some {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Pods:")
	t := newTable(w, "  ATTEMPT", "HOST", "POD", "NODE", "PHASE")
	for i, l := range instances {
		for _, in := range l {
			t.row("  "+strconv.Itoa(i+1), in.Host, orDash(in.Name), orDash(in.Node), orDash(in.Phase))
		}
	}
	return t.flush()
}

// when renders a time and how long ago it was.
func when(ms int64) string {
	if ms == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s ago)", clock(ms), age(ms))
}

// limits sums up the job's retry, timeout and preemption settings.
func limits(j *batch.DescribeServiceJobOutput) string {
	var parts []string
	if rs := j.RetryStrategy; rs != nil && aws.ToInt32(rs.Attempts) > 1 {
		parts = append(parts, fmt.Sprintf("%d attempts", aws.ToInt32(rs.Attempts)))
	}
	if tc := j.TimeoutConfig; tc != nil && aws.ToInt32(tc.AttemptDurationSeconds) > 0 {
		parts = append(parts, "timeout "+(time.Duration(aws.ToInt32(tc.AttemptDurationSeconds))*time.Second).String())
	}
	if pc := j.PreemptionConfiguration; pc != nil && pc.PreemptionRetriesBeforeTermination != nil {
		parts = append(parts, fmt.Sprintf("fails after %s", plural(int(aws.ToInt32(pc.PreemptionRetriesBeforeTermination))+1, "preemption")))
	}
	return strings.Join(parts, "; ")
}

func attemptsLine(j *batch.DescribeServiceJobOutput) string {
	n := len(j.Attempts)
	if n == 0 {
		return "none yet"
	}
	s := strconv.Itoa(n)
	if ps := j.PreemptionSummary; ps != nil && aws.ToInt32(ps.PreemptedAttemptCount) > 0 {
		s += fmt.Sprintf(" (%s)", plural(int(aws.ToInt32(ps.PreemptedAttemptCount)), "preemption"))
	}
	return s
}

// writeTimeline shows each state change with the attempt it belongs to:
// SCHEDULED starts an attempt, and the change that follows RUNNING (or an
// earlier dispatched state) ends it, with the reason it ended.
func writeTimeline(w io.Writer, created int64, evs []batchapi.Event, names map[string]string) error {
	t := newTable(w, "  TIME", "AFTER", "STATUS", "ATTEMPT", "REASON")
	attempt, inAttempt := 0, false
	// The submission is not an event, as in AWS Batch; the job's creation
	// time marks it.
	t.row("  "+clock(created), "+0s", "SUBMITTED", "-", "")
	for _, ev := range evs {
		at, _ := time.Parse(time.RFC3339Nano, ev.Time)
		st := ev.Detail.Status
		cell := "-"
		switch {
		case st == "SCHEDULED":
			attempt++
			inAttempt = true
			cell = strconv.Itoa(attempt)
		case st == "STARTING" || st == "RUNNING":
			cell = strconv.Itoa(attempt)
		case inAttempt:
			cell = strconv.Itoa(attempt) + " ended"
			inAttempt = false
		}
		t.row("  "+clock(at.UnixMilli()), "+"+duration(at.Sub(time.UnixMilli(created))), st, cell, nameJobs(ev.Detail.StatusReason, names))
	}
	return t.flush()
}
