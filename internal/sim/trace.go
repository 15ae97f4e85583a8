package sim

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A trace is a list of events, one per CSV row or JSON line, with these
// fields (CSV: a header row names the columns, in any order):
//
//	at               seconds from the start (0.5) or a Go duration (1m30s)
//	event            submit (default), priority or cancel
//	job              the job's unique ID
//	share            quota share (submit)
//	priority         schedulingPriority (submit, priority)
//	instance_type    e.g. ml.g5.xlarge (submit)
//	instance_count   instances (submit; default 1)
//	runtime          seconds or a duration the job runs once RUNNING (submit)
//	queue            job queue (submit; default the config's only one)
//	class            a label to group wait times by (submit; optional)
//	name             jobName (submit; default the ID)
//	preemption_retries  preemptionRetriesBeforeTermination (submit; optional)
//	instance_groups  the instance groups of a job of several, instead of
//	                 instance_type and instance_count: TYPE:COUNT joined by
//	                 '+' (ml.g5.xlarge:2+ml.p4d.24xlarge:1) (submit; optional)
//
// A priority or cancel event refers to a job submitted earlier in time.

// traceColumns are the fields, in the order WriteCSV writes them.
// WriteCSV writes instance_groups only when a job has several.
var traceColumns = [numColumns]string{"at", "event", "job", "share", "priority", "instance_type", "instance_count", "runtime", "queue", "class", "name", "preemption_retries", "instance_groups"}

// The columns' indexes in traceColumns, in its order.
const (
	colAt = iota
	colEvent
	colJob
	colShare
	colPriority
	colInstanceType
	colInstanceCount
	colRuntime
	colQueue
	colClass
	colName
	colPreemptionRetries
	colInstanceGroups
	numColumns
)

// columnIndex is a column's index in traceColumns, or -1.
func columnIndex(name string) int {
	for i, c := range traceColumns {
		if c == name {
			return i
		}
	}
	return -1
}

// fields is one event as read from either format: each column's value, by
// its index in traceColumns, and the first field that is not a column.
type fields struct {
	v          [numColumns]string
	hasUnknown bool
	unknown    string
}

// other notes a field that is not a column, keeping the first.
func (f *fields) other(name string) {
	if !f.hasUnknown {
		f.hasUnknown, f.unknown = true, name
	}
}

// traceRow is one event to write, by column name.
type traceRow map[string]string

// ReadTraceFile reads a CSV or JSON-lines trace, chosen by the extension
// (.csv; .jsonl, .ndjson, .json) or else by the first character.
func ReadTraceFile(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := ReadTrace(bufio.NewReaderSize(f, 1<<16), formatOf(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.Name = filepath.Base(path)
	return w, nil
}

func formatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".jsonl", ".ndjson", ".json":
		return "jsonl"
	}
	return ""
}

// ReadTrace reads a trace in format "csv" or "jsonl" ("" to guess from the
// first character: '{' is JSON lines).
func ReadTrace(r *bufio.Reader, format string) (*Workload, error) {
	if format == "" {
		format = "csv"
		if b, err := peekNonSpace(r); err == nil && b == '{' {
			format = "jsonl"
		}
	}
	b := newTraceBuilder()
	var err error
	if format == "jsonl" {
		err = readJSONL(r, b.add)
	} else {
		err = readCSV(r, b.add)
	}
	if err != nil {
		return nil, err
	}
	return b.finish()
}

func peekNonSpace(r *bufio.Reader) (byte, error) {
	for n := 1; ; n++ {
		p, err := r.Peek(n)
		if len(p) < n {
			return 0, err
		}
		if c := p[n-1]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c, nil
		}
	}
}

func readCSV(r io.Reader, add func(line int, row *fields) error) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("csv header: %w", err)
	}
	cols := append([]string(nil), header...)
	index := make([]int, len(cols)) // each column's in traceColumns, or -1
	for i, c := range cols {
		cols[i] = strings.TrimSpace(strings.ToLower(c))
		index[i] = columnIndex(cols[i])
	}
	var row fields // reused: add keeps the values, not the row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		row = fields{}
		for i, k := range index {
			switch {
			case i >= len(rec):
			case k >= 0:
				row.v[k] = strings.TrimSpace(rec[i])
			default:
				row.other(cols[i])
			}
		}
		if err := add(line, &row); err != nil {
			return err
		}
	}
}

func readJSONL(r *bufio.Reader, add func(line int, row *fields) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(text, &m); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		var row fields
		for k, v := range m {
			var val string
			switch x := v.(type) {
			case string:
				val = x
			case float64:
				val = strconv.FormatFloat(x, 'f', -1, 64)
			case nil:
				continue
			default:
				return fmt.Errorf("line %d: field %s is not a string or number", line, k)
			}
			if i := columnIndex(k); i >= 0 {
				row.v[i] = val
			} else {
				row.other(k)
			}
		}
		if err := add(line, &row); err != nil {
			return err
		}
	}
	return sc.Err()
}

// traceBuilder turns rows into jobs.
type traceBuilder struct {
	w *Workload
	// chunks hold the jobs as read, chunkSize each: one slice grown to a
	// million jobs would allocate and copy them several times over.
	chunks  [][]Job
	n       int               // jobs read
	index   map[string]int    // job ID → its place
	strings map[string]string // see intern
}

const chunkSize = 4096

func newTraceBuilder() *traceBuilder {
	return &traceBuilder{w: &Workload{}, index: map[string]int{}}
}

// job is the i-th job read.
func (b *traceBuilder) job(i int) *Job { return &b.chunks[i/chunkSize][i%chunkSize] }

func (b *traceBuilder) add(line int, row *fields) error {
	if err := b.addRow(row); err != nil {
		return fmt.Errorf("line %d: %w", line, err)
	}
	return nil
}

func (b *traceBuilder) addRow(row *fields) error {
	if row.hasUnknown {
		return fmt.Errorf("unknown field %q", row.unknown)
	}
	at, err := parseSeconds(row.v[colAt], "at")
	if err != nil {
		return err
	}
	id := row.v[colJob]
	if id == "" {
		return errors.New("job is empty")
	}
	switch row.v[colEvent] {
	case "", "submit":
		return b.submit(id, at, row)
	case "priority":
		p, err := parseInt(row.v[colPriority], "priority", -1)
		if err != nil || p < 0 {
			return fmt.Errorf("priority event needs a priority: %v", err)
		}
		return b.change(id, Change{At: at, Priority: p})
	case "cancel":
		return b.change(id, Change{At: at, Cancel: true})
	}
	return fmt.Errorf("event %q is not submit, priority or cancel", row.v[colEvent])
}

func (b *traceBuilder) submit(id string, at time.Duration, row *fields) error {
	id = strings.Clone(id) // not the input line it is part of
	if b.index[id] = b.n; len(b.index) == b.n {
		return fmt.Errorf("job %s is submitted twice", id)
	}
	j := Job{ID: id, Name: strings.Clone(row.v[colName]), Class: b.intern(row.v[colClass]), At: at, Queue: b.intern(row.v[colQueue]),
		Share: b.intern(row.v[colShare]), InstanceType: b.intern(row.v[colInstanceType])}
	var err error
	if j.Priority, err = parseInt(row.v[colPriority], "priority", 0); err != nil {
		return err
	}
	if j.Count, err = parseInt(row.v[colInstanceCount], "instance_count", 1); err != nil {
		return err
	}
	if j.Runtime, err = parseSeconds(row.v[colRuntime], "runtime"); err != nil {
		return err
	}
	if v := row.v[colPreemptionRetries]; v != "" {
		n, err := parseInt(v, "preemption_retries", 0)
		if err != nil {
			return err
		}
		j.PreemptionRetries = &n
	}
	if v := row.v[colInstanceGroups]; v != "" {
		if j.InstanceType != "" || row.v[colInstanceCount] != "" {
			return errors.New("give instance_groups or instance_type and instance_count, not both")
		}
		gs, err := parseGroups(v, b.intern)
		if err != nil {
			return err
		}
		j.InstanceType, j.Count = gs[0].Type, gs[0].Count
		if len(gs) > 1 {
			j.Groups = gs
		}
	}
	if b.n%chunkSize == 0 {
		b.chunks = append(b.chunks, make([]Job, 0, chunkSize))
	}
	c := &b.chunks[len(b.chunks)-1]
	*c = append(*c, j)
	b.n++
	return nil
}

// intern returns one copy of each of the few distinct shares, queues,
// classes and instance types, so that a job does not keep its whole input
// line alive through them.
func (b *traceBuilder) intern(v string) string {
	if s, ok := b.strings[v]; ok {
		return s
	}
	if b.strings == nil {
		b.strings = map[string]string{}
	}
	v = strings.Clone(v)
	b.strings[v] = v
	return v
}

func (b *traceBuilder) change(id string, c Change) error {
	i, ok := b.index[id]
	if !ok {
		return fmt.Errorf("job %s is changed before it is submitted", id)
	}
	j := b.job(i)
	j.Changes = append(j.Changes, c)
	return nil
}

func (b *traceBuilder) finish() (*Workload, error) {
	b.w.Jobs = make([]Job, 0, b.n)
	for k, c := range b.chunks {
		b.w.Jobs = append(b.w.Jobs, c...)
		b.chunks[k] = nil // garbage as soon as copied
	}
	for _, j := range b.w.Jobs {
		for _, c := range j.Changes {
			if c.At < j.At {
				return nil, fmt.Errorf("job %s is changed at %s, before its submission at %s", j.ID, c.At, j.At)
			}
		}
	}
	b.w.Sort()
	// The IDs are unique (submit refuses a second): no map to check them.
	if err := b.w.check(nil); err != nil {
		return nil, err
	}
	return b.w, nil
}

// parseGroups reads instance_groups: TYPE:COUNT joined by '+'.
func parseGroups(s string, intern func(string) string) ([]InstanceGroup, error) {
	var out []InstanceGroup
	for _, part := range strings.Split(s, "+") {
		typ, count, ok := strings.Cut(strings.TrimSpace(part), ":")
		n, err := strconv.Atoi(count)
		if !ok || typ == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("instance_groups %q: want TYPE:COUNT joined by '+', e.g. ml.g5.xlarge:2+ml.p4d.24xlarge:1", s)
		}
		out = append(out, InstanceGroup{Type: intern(typ), Count: n})
	}
	return out, nil
}

// formatGroups writes instance_groups.
func formatGroups(gs []InstanceGroup) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.Type + ":" + strconv.Itoa(g.Count)
	}
	return strings.Join(parts, "+")
}

func parseInt(s, field string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", field, s)
	}
	return n, nil
}

// parseSeconds reads seconds ("90", "0.25") or a Go duration ("1m30s").
func parseSeconds(s, field string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f > math.MaxInt64/1e9 {
			return 0, fmt.Errorf("%s %q is out of range", field, s)
		}
		return time.Duration(math.Round(f * 1e9)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q is neither seconds nor a duration", field, s)
	}
	return d, nil
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// WriteCSV writes a workload as a CSV trace that ReadTrace reads back.
func WriteCSV(out io.Writer, w *Workload) error {
	cw := csv.NewWriter(out)
	cols := traceColumns[:colInstanceGroups]
	if slices.ContainsFunc(w.Jobs, func(j Job) bool { return len(j.Groups) > 0 }) {
		cols = traceColumns[:] // readers of traces without groups need not know the column
	}
	if err := cw.Write(cols); err != nil {
		return err
	}
	for _, row := range traceRows(w) {
		rec := make([]string, len(cols))
		for i, c := range cols {
			rec[i] = row[c]
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONL writes a workload as a JSON-lines trace.
func WriteJSONL(out io.Writer, w *Workload) error {
	bw := bufio.NewWriter(out)
	for _, row := range traceRows(w) {
		m := map[string]any{}
		for k, v := range row {
			if n, err := strconv.ParseFloat(v, 64); err == nil && k != "job" && k != "share" && k != "name" && k != "queue" && k != "class" {
				m[k] = n
			} else {
				m[k] = v
			}
		}
		b, err := json.Marshal(m) // map keys are sorted: stable output
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// traceRows renders the submissions and changes as rows in time order.
func traceRows(w *Workload) []traceRow {
	type timed struct {
		at  time.Duration
		seq int
		row traceRow
	}
	var all []timed
	for _, j := range w.Jobs {
		all = append(all, timed{j.At, len(all), submitRow(j)})
		for _, c := range j.Changes {
			row := traceRow{"at": formatSeconds(c.At), "job": j.ID, "event": "cancel"}
			if !c.Cancel {
				row["event"], row["priority"] = "priority", strconv.Itoa(c.Priority)
			}
			all = append(all, timed{c.At, len(all), row})
		}
	}
	slices.SortStableFunc(all, func(a, b timed) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	rows := make([]traceRow, len(all))
	for i, t := range all {
		rows[i] = t.row
	}
	return rows
}

func submitRow(j Job) traceRow {
	row := traceRow{
		"at": formatSeconds(j.At), "event": "submit", "job": j.ID, "share": j.Share, "priority": strconv.Itoa(j.Priority),
		"instance_type": j.InstanceType, "instance_count": strconv.Itoa(j.Count), "runtime": formatSeconds(j.Runtime),
	}
	for k, v := range map[string]string{"queue": j.Queue, "class": j.Class, "name": j.Name} {
		if v != "" {
			row[k] = v
		}
	}
	if j.PreemptionRetries != nil {
		row["preemption_retries"] = strconv.Itoa(*j.PreemptionRetries)
	}
	if len(j.Groups) > 0 {
		delete(row, "instance_type")
		delete(row, "instance_count")
		row["instance_groups"] = formatGroups(j.Groups)
	}
	return row
}
