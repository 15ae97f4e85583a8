package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/google/uuid"
)

// Client modes: how requests reach the server.
const (
	modeSDK  = "sdk"  // the AWS SDK for Go v2 Batch client
	modeHTTP = "http" // net/http's client with the same JSON, unsigned
	modeWire = "wire" // the minimal HTTP/1.1 client of wire.go, same JSON
)

// client talks to one server. Setting up queues always goes through the
// SDK; the measured calls go the way mode says. sharq takes requests with
// any signature or none, so the raw modes do not sign.
type client struct {
	endpoint string
	mode     string
	hc       *http.Client
	sdk      *batch.Client
	wire     *wire
	bufs     sync.Pool
}

// newClient makes a client whose connection pool keeps conns connections
// alive: Go's default of 2 idle connections per host would make most of
// many concurrent clients dial anew for each request.
func newClient(endpoint, mode string, conns int) (*client, error) {
	tr := &http.Transport{
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	c := &client{
		endpoint: endpoint,
		mode:     mode,
		hc:       hc,
		sdk: batch.New(batch.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(endpoint),
			Credentials:  credentials.NewStaticCredentialsProvider("sharq-load", "sharq-load", ""),
			// A failure is counted, not hidden behind a retry.
			Retryer:    aws.NopRetryer{},
			HTTPClient: hc,
		}),
	}
	c.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	switch mode {
	case modeSDK, modeHTTP:
	case modeWire:
		w, err := newWire(endpoint, conns)
		if err != nil {
			return nil, err
		}
		c.wire = w
	default:
		return nil, fmt.Errorf("unknown client %q (want sdk, http or wire)", mode)
	}
	return c, nil
}

func (c *client) close() {
	c.hc.CloseIdleConnections()
	if c.wire != nil {
		c.wire.close()
	}
}

// jobSpec is one job to submit.
type jobSpec struct {
	Name, Queue, Share string
	Priority           int
	InstanceType       string
	Instances          int
	RuntimeMs          int // 0: runs until stopped
}

// payload is a CreateTrainingJob request asking for the spec's instances,
// with the simulated executor's runtime.
func (s jobSpec) payload() string {
	env := ""
	if s.RuntimeMs > 0 {
		env = `,"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"` + strconv.Itoa(s.RuntimeMs) + `"}`
	}
	return `{"TrainingJobName":"` + s.Name + `","RoleArn":"arn:aws:iam::000000000000:role/sharq-load",` +
		`"AlgorithmSpecification":{"TrainingImage":"sharq-load","TrainingInputMode":"File"},` +
		`"ResourceConfig":{"InstanceType":"` + s.InstanceType + `","InstanceCount":` + strconv.Itoa(s.Instances) + `,"VolumeSizeInGB":1}` +
		env + `}`
}

// submitRequest is SubmitServiceJob's JSON body, as the SDK sends it.
type submitRequest struct {
	ClientToken           string `json:"clientToken"`
	JobName               string `json:"jobName"`
	JobQueue              string `json:"jobQueue"`
	QuotaShareName        string `json:"quotaShareName,omitempty"`
	SchedulingPriority    int    `json:"schedulingPriority"`
	ServiceJobType        string `json:"serviceJobType"`
	ServiceRequestPayload string `json:"serviceRequestPayload"`
}

// submit submits a job and returns its ID once the server answered, which
// it does after the submission is durable.
func (c *client) submit(ctx context.Context, s jobSpec) (string, error) {
	if c.mode != modeSDK {
		var out struct {
			JobID string `json:"jobId"`
		}
		err := c.post(ctx, "/v1/submitservicejob", submitRequest{
			ClientToken: uuid.NewString(), JobName: s.Name, JobQueue: s.Queue, QuotaShareName: s.Share,
			SchedulingPriority: s.Priority, ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: s.payload(),
		}, &out)
		return out.JobID, err
	}
	in := &batch.SubmitServiceJobInput{
		JobName: aws.String(s.Name), JobQueue: aws.String(s.Queue), ServiceJobType: types.ServiceJobTypeSagemakerTraining,
		ServiceRequestPayload: aws.String(s.payload()), SchedulingPriority: aws.Int32(int32(s.Priority)),
	}
	if s.Share != "" {
		in.QuotaShareName = aws.String(s.Share)
	}
	out, err := c.sdk.SubmitServiceJob(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.JobId), nil
}

// jobView is what the tool reads of a described job. Times are epoch ms.
type jobView struct {
	ID          string `json:"jobId"`
	Name        string `json:"jobName"`
	Status      string `json:"status"`
	Share       string `json:"quotaShareName"`
	CreatedAt   int64  `json:"createdAt"`
	ScheduledAt int64  `json:"scheduledAt"`
	StartedAt   int64  `json:"startedAt"`
	StoppedAt   int64  `json:"stoppedAt"`
	Attempts    []struct {
		StartedAt int64 `json:"startedAt"`
		StoppedAt int64 `json:"stoppedAt"`
	} `json:"attempts"`
	PreemptionSummary *struct {
		PreemptedAttemptCount int `json:"preemptedAttemptCount"`
	} `json:"preemptionSummary"`
	CapacityUsage []struct {
		Quantity float64 `json:"quantity"`
	} `json:"capacityUsage"`
}

func (j *jobView) preempted() int {
	if j.PreemptionSummary == nil {
		return 0
	}
	return j.PreemptionSummary.PreemptedAttemptCount
}

func (j *jobView) instances() float64 {
	n := 0.0
	for _, u := range j.CapacityUsage {
		n += u.Quantity
	}
	return n
}

// firstDispatch is when the job was first SCHEDULED (epoch ms), 0 if
// never. A job that was never preempted has one dispatch, scheduledAt; a
// preempted one's scheduledAt is its latest, so its first attempt's start
// stands in (the simulated executor starts an attempt as soon as it is
// dispatched).
func (j *jobView) firstDispatch() int64 {
	if j.preempted() == 0 || len(j.Attempts) == 0 || j.Attempts[0].StartedAt == 0 {
		return j.ScheduledAt
	}
	return min(j.Attempts[0].StartedAt, j.ScheduledAt)
}

func (c *client) describe(ctx context.Context, id string) (jobView, error) {
	var v jobView
	if c.mode != modeSDK {
		err := c.post(ctx, "/v1/describeservicejob", describeRequest{id}, &v)
		return v, err
	}
	out, err := c.sdk.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
	if err != nil {
		return v, err
	}
	v = jobView{
		ID: aws.ToString(out.JobId), Name: aws.ToString(out.JobName), Status: string(out.Status), Share: aws.ToString(out.QuotaShareName),
		CreatedAt: aws.ToInt64(out.CreatedAt), ScheduledAt: aws.ToInt64(out.ScheduledAt),
		StartedAt: aws.ToInt64(out.StartedAt), StoppedAt: aws.ToInt64(out.StoppedAt),
	}
	for _, a := range out.Attempts {
		v.Attempts = append(v.Attempts, struct {
			StartedAt int64 `json:"startedAt"`
			StoppedAt int64 `json:"stoppedAt"`
		}{aws.ToInt64(a.StartedAt), aws.ToInt64(a.StoppedAt)})
	}
	if ps := out.PreemptionSummary; ps != nil {
		v.PreemptionSummary = &struct {
			PreemptedAttemptCount int `json:"preemptedAttemptCount"`
		}{int(aws.ToInt32(ps.PreemptedAttemptCount))}
	}
	for _, u := range out.CapacityUsage {
		v.CapacityUsage = append(v.CapacityUsage, struct {
			Quantity float64 `json:"quantity"`
		}{aws.ToFloat64(u.Quantity)})
	}
	return v, nil
}

type describeRequest struct {
	JobID string `json:"jobId"`
}

// describeCheck describes a job for a throughput measurement: the SDK
// decodes the whole answer, as it always does; the raw modes only check
// that the answer is a 200 naming the job, leaving decoding (client work a
// separate client machine would do) out of the CPU they share with the
// server.
func (c *client) describeCheck(ctx context.Context, id string) error {
	if c.mode == modeSDK {
		_, err := c.describe(ctx, id)
		return err
	}
	bp := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(bp)
	body, err := c.send(ctx, c.mode, "/v1/describeservicejob", describeRequest{id}, *bp)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(`"jobId":"`+id+`"`)) {
		return fmt.Errorf("describe %s: the answer is about another job: %.200s", id, body)
	}
	return nil
}

// post sends one raw API request and decodes its answer.
func (c *client) post(ctx context.Context, path string, in, out any) error {
	return c.postVia(ctx, c.mode, path, in, out)
}

func (c *client) postVia(ctx context.Context, mode, path string, in, out any) error {
	bp := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(bp)
	body, err := c.send(ctx, mode, path, in, *bp)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, out)
}

// send sends one raw API request (mode http or wire) and returns the body of its 200 answer,
// read into buf when it fits.
func (c *client) send(ctx context.Context, mode, path string, in any, buf []byte) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if mode == modeWire {
		return c.wire.post(ctx, path, b, buf)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	w := bytes.NewBuffer(buf[:0])
	if _, err := w.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, bytes.TrimSpace(w.Bytes()))
	}
	return w.Bytes(), nil
}

// queueIdle tells whether a queue has nothing running and nothing
// waiting, from its snapshot. It asks without the SDK whatever the mode:
// the SDK (aws-sdk-go-v2 with smithy-go 1.28) sometimes fails to read a
// large answer on a busy machine ("use of closed network connection"
// while decoding, aws/aws-sdk-go-v2#1825), and this poll only needs two
// fields.
func (c *client) queueIdle(ctx context.Context, queue string) (bool, error) {
	var snap struct {
		FrontOfQueue struct {
			Jobs []json.RawMessage `json:"jobs"`
		} `json:"frontOfQueue"`
		QueueUtilization struct {
			TotalCapacityUsage []struct {
				Quantity float64 `json:"quantity"`
			} `json:"totalCapacityUsage"`
		} `json:"queueUtilization"`
	}
	mode := c.mode
	if mode == modeSDK {
		mode = modeHTTP
	}
	if err := c.postVia(ctx, mode, "/v1/getjobqueuesnapshot", map[string]string{"jobQueue": queue}, &snap); err != nil {
		return false, err
	}
	if len(snap.FrontOfQueue.Jobs) > 0 {
		return false, nil
	}
	for _, u := range snap.QueueUtilization.TotalCapacityUsage {
		if u.Quantity > 0 {
			return false, nil
		}
	}
	return true, nil
}
