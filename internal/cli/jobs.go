package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// Job statuses, in the order a job goes through them.
var (
	activeStatuses = []string{"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"}
	allStatuses    = append(slices.Clone(activeStatuses), "SUCCEEDED", "FAILED")
)

// jobRow is one job as `sharq jobs` shows it, and its -o json shape.
type jobRow struct {
	Name          string     `json:"jobName"`
	ID            string     `json:"jobId"`
	Arn           string     `json:"jobArn"`
	Queue         string     `json:"jobQueue"`
	Share         string     `json:"quotaShareName,omitempty"`
	Status        string     `json:"status"`
	Priority      int        `json:"schedulingPriority"`
	Place         int        `json:"place,omitempty"`
	WaitingReason string     `json:"waitingReason,omitempty"`
	StatusReason  string     `json:"statusReason,omitempty"`
	Capacity      []capacity `json:"capacityUsage"`
	Preemptions   int        `json:"preemptions"`
	Owner         string     `json:"owner,omitempty"` // the submitter's principal
	Holding       *holding   `json:"holding,omitempty"`
	CreatedAt     int64      `json:"createdAt"`
	StartedAt     int64      `json:"startedAt,omitempty"`
	StoppedAt     int64      `json:"stoppedAt,omitempty"`

	// ETA is a waiting job's estimated start.
	ETA *sharqapi.StartEstimate `json:"eta,omitempty"`
}

type capacity struct {
	Unit     string  `json:"capacityUnit"`
	Quantity float64 `json:"quantity"`
}

type jobsFlags struct {
	queue, share, status, owner string
}

// Jobs is `sharq jobs`: a table of jobs with where each waiting one stands
// in its share and why.
func Jobs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("jobs", "", "List jobs: by default those not ended yet.", stdout, stderr, true)
	var f jobsFlags
	v.fs.StringVar(&f.queue, "queue", "", "only this job queue")
	v.fs.StringVar(&f.share, "share", "", "only this quota share")
	v.fs.StringVar(&f.status, "status", "", "only these statuses, comma-separated, or 'all' (default: all but SUCCEEDED and FAILED)")
	v.fs.StringVar(&f.owner, "owner", "", "only the jobs this principal submitted: 'me' (the key the request is signed with), an ARN or a user name")
	if _, err := v.parse(args, 0, 0); err != nil {
		return v.exit(err)
	}
	return v.exit(jobs(ctx, v, f))
}

func jobs(ctx context.Context, v *verb, f jobsFlags) error {
	statuses, err := parseStatuses(f.status)
	if err != nil {
		return err
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	owner, err := c.resolveOwner(ctx, f.owner)
	if err != nil {
		return err
	}
	rows, err := c.jobRows(ctx, f.queue, f.share, statuses)
	if err != nil {
		return err
	}
	if owner != "" {
		rows = slices.DeleteFunc(rows, func(r jobRow) bool { return r.Owner != owner && userName(r.Owner) != owner })
	}
	if v.json() {
		return printJSON(v.stdout, rows)
	}
	if len(rows) == 0 && owner != "" {
		fmt.Fprintf(v.stdout, "no jobs of %s\n", owner)
		return nil
	}
	if len(rows) == 0 && f.status == "" {
		fmt.Fprintln(v.stdout, "no unfinished jobs ('sharq jobs --status all' shows the ended ones too)")
		return nil
	}
	return writeJobs(v.stdout, rows)
}

// resolveOwner is the principal (or user name) --owner names; "me" asks
// the server whom it takes the caller for.
func (c *client) resolveOwner(ctx context.Context, owner string) (string, error) {
	if owner != "me" {
		return owner, nil
	}
	var who sharqapi.Caller
	if err := c.getJSON(ctx, sharqapi.WhoAmIPath, nil, &who); err != nil {
		return "", err
	}
	if who.Anonymous {
		return "", usagef("--owner me: the server does not know who you are (the request is not signed with one of its access keys), and records no owner for your jobs")
	}
	return who.Principal, nil
}

func parseStatuses(s string) ([]string, error) {
	switch strings.ToLower(s) {
	case "":
		return activeStatuses, nil
	case "all":
		return allStatuses, nil
	}
	var out []string
	for _, st := range strings.Split(strings.ToUpper(s), ",") {
		st = strings.TrimSpace(st)
		if !slices.Contains(allStatuses, st) {
			return nil, usagef("unknown status %q (want %s or all)", st, strings.Join(allStatuses, ", "))
		}
		out = append(out, st)
	}
	return out, nil
}

// jobRows lists the jobs of the given statuses and adds where each stands.
func (c *client) jobRows(ctx context.Context, queue, share string, statuses []string) ([]jobRow, error) {
	var rows []jobRow
	seen := map[string]bool{} // a job that changes status between two listings shows once
	for _, st := range statuses {
		in := &batch.ListServiceJobsInput{JobStatus: types.ServiceJobStatus(st)}
		if queue != "" {
			in.JobQueue = aws.String(queue)
		}
		if share != "" {
			in.Filters = []types.KeyValuesPair{{Name: aws.String("QUOTA_SHARE_NAME"), Values: []string{share}}}
		}
		for p := batch.NewListServiceJobsPaginator(c.batch, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range page.JobSummaryList {
				if id := aws.ToString(s.JobId); !seen[id] {
					seen[id] = true
					rows = append(rows, summaryRow(s))
				}
			}
		}
	}
	if err := c.addPositions(ctx, rows); err != nil {
		return nil, err
	}
	sortJobs(rows)
	return rows, nil
}

func summaryRow(s types.ServiceJobSummary) jobRow {
	r := jobRow{
		Name: aws.ToString(s.JobName), ID: aws.ToString(s.JobId), Arn: aws.ToString(s.JobArn),
		Share: aws.ToString(s.QuotaShareName), Status: string(s.Status), StatusReason: aws.ToString(s.StatusReason),
		CreatedAt: aws.ToInt64(s.CreatedAt), StartedAt: aws.ToInt64(s.StartedAt), StoppedAt: aws.ToInt64(s.StoppedAt),
		Capacity: []capacity{},
	}
	for _, u := range s.CapacityUsage {
		r.Capacity = append(r.Capacity, capacity{aws.ToString(u.CapacityUnit), aws.ToFloat64(u.Quantity)})
	}
	return r
}

// addPositions fills in what the AWS summary lacks: queue, priority, and a
// waiting job's place and reason.
func (c *client) addPositions(ctx context.Context, rows []jobRow) error {
	byID := map[string]*jobRow{}
	var ids []string
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
		ids = append(ids, rows[i].ID)
	}
	for len(ids) > 0 {
		n := min(len(ids), sharqapi.MaxPositions)
		var out sharqapi.Positions
		if err := c.postJSON(ctx, "/sharq/v1/jobs/positions", sharqapi.PositionsRequest{JobIDs: ids[:n]}, &out); err != nil {
			return err
		}
		for _, p := range out.Jobs {
			if r := byID[p.JobID]; r != nil {
				r.Holding = p.Holding
				r.Queue, r.Priority, r.Place, r.WaitingReason, r.Preemptions = p.Queue, p.Priority, p.Place, p.Reason, p.Preemptions
				r.Status = p.Status // newer than the listing's
				r.Owner = p.Owner
				r.ETA = p.ETA
			}
		}
		ids = ids[n:]
	}
	return nil
}

// stage groups jobs for the table: running ones, then waiting ones, then
// ended ones.
func stage(status string) int {
	switch status {
	case "SCHEDULED", "STARTING", "RUNNING":
		return 0
	case "SUCCEEDED", "FAILED":
		return 2
	}
	return 1
}

// sortJobs orders jobs by queue and share, running before waiting before
// ended; waiting jobs in their order in the share, ended ones newest first.
func sortJobs(rows []jobRow) {
	slices.SortFunc(rows, func(a, b jobRow) int {
		if c := cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Share, b.Share), cmp.Compare(stage(a.Status), stage(b.Status))); c != 0 {
			return c
		}
		if stage(a.Status) == 2 {
			return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(a.ID, b.ID))
		}
		return cmp.Or(cmp.Compare(placeKey(a), placeKey(b)), cmp.Compare(b.Priority, a.Priority),
			cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// placeKey sorts jobs with a place by it and the others (SUBMITTED) last.
func placeKey(r jobRow) int {
	if r.Place == 0 {
		return 1 << 30
	}
	return r.Place
}

// reasonWidth is where the REASON column is cut: wide enough for every
// waiting reason in full (a misconfiguration's code and its explanation),
// while a failure's stderr tail is cut.
const reasonWidth = 200

func writeJobs(w io.Writer, rows []jobRow) error {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no jobs")
		return nil
	}
	queues := map[string]bool{}
	owners := false
	for _, r := range rows {
		queues[r.Queue] = true
		owners = owners || r.Owner != ""
	}
	header := []string{"NAME", "ID", "SHARE", "STATUS", "PRIO", "POS", "INSTANCES", "AGE", "REASON"}
	eta, width := hasETA(rows), nameWidth
	if eta {
		header, width = slices.Insert(header, 6, "ETA"), nameWidth-etaWidth
	}
	if owners { // only a server that checks signatures knows owners
		header = slices.Insert(header, 3, "OWNER")
	}
	if len(queues) > 1 {
		header = append([]string{"QUEUE"}, header...)
	}
	header, capCol := withCapacityColumn(header)
	names := map[string]string{}
	for _, r := range rows {
		names[r.ID] = r.Name
	}
	t := newTable(w, header...)
	for _, r := range rows {
		cells := []string{squeeze(r.Name, nameWidth), shortID(r.ID), orDash(r.Share), r.Status, strconv.Itoa(r.Priority), place(r.Place),
			instances(r.Capacity), age(r.CreatedAt), truncate(nameJobs(rowReason(r), names), reasonWidth)}
		if eta {
			cells[0] = squeeze(r.Name, width)
			cells = slices.Insert(cells, 6, etaCell(r.ETA))
		}
		if owners {
			cells = slices.Insert(cells, 3, orDash(userName(r.Owner)))
		}
		if len(queues) > 1 {
			cells = append([]string{r.Queue}, cells...)
		}
		cells = slices.Insert(cells, capCol, capacityCell(r.Holding))
		t.row(cells...)
	}
	return t.flush()
}

func place(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

// rowReason is what a person wants to know of a job at a glance: why it
// waits, why it failed, or how often it was preempted.
func rowReason(r jobRow) string {
	switch {
	case r.WaitingReason != "":
		return r.WaitingReason
	case r.Status == "FAILED":
		return r.StatusReason
	case stage(r.Status) == 0:
		var notes []string
		if r.Status == "SCHEDULED" && r.StatusReason != "" {
			notes = append(notes, r.StatusReason) // what its start waits for
		}
		if n := reclaimNote(r.Holding); n != "" {
			notes = append(notes, n)
		}
		if r.Preemptions > 0 {
			notes = append(notes, "preempted "+plural(r.Preemptions, "time")+" before")
		}
		return strings.Join(notes, "; ")
	}
	return ""
}

// instances renders capacity as "2×ml.g5.xlarge".
func instances(cs []capacity) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%g×%s", c.Quantity, c.Unit))
	}
	return orDash(strings.Join(parts, "+"))
}

// userName is the user name of an IAM user's ARN (arn:aws:iam::1:user/NAME).
func userName(principal string) string {
	if i := strings.LastIndex(principal, ":user/"); i >= 0 {
		return principal[i+len(":user/"):]
	}
	return principal
}
