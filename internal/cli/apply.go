package cli

import (
	"context"
	"fmt"
	"io"
	"path"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
)

// change is one step of an apply: a resource to create or update.
type change struct {
	Action  string   `json:"action"` // create or update
	Kind    string   `json:"kind"`   // scheduling policy, service environment, job queue, quota share
	Name    string   `json:"name"`   // a quota share's is QUEUE/SHARE
	Details []string `json:"details"`
	do      func(context.Context) error
}

func (c change) String() string {
	mark := "+"
	if c.Action == "update" {
		mark = "~"
	}
	s := fmt.Sprintf("%s %s %s %s", mark, c.Action, c.Kind, c.Name)
	for i, d := range c.Details {
		if i == 0 {
			s += ": " + d
		} else {
			s += "; " + d
		}
	}
	return s
}

// applyResult is apply's -o json output.
type applyResult struct {
	Changes  []change `json:"changes"`
	Applied  bool     `json:"applied"`
	Warnings []string `json:"warnings,omitempty"`
}

// Apply is `sharq apply -f FILE`: it makes the server's scheduling
// policies, service environments, job queues and quota shares match the
// file. It prints the changes first, then makes them; a second apply of the
// same file finds nothing to change. It creates and updates, and never
// deletes what the file does not name.
func Apply(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("apply", "", "Create or update scheduling policies, service environments, job queues and quota shares\n"+
		"to match a YAML file (see examples/announcement.yaml). Resources the file does not name are left alone,\n"+
		"and so are tags it does not name.", stdout, stderr, true)
	file := v.fs.String("f", "", "the cluster file (YAML); - reads stdin")
	dryRun := v.fs.Bool("dry-run", false, "only show what would change")
	if _, err := v.parse(args, 0, 0); err != nil {
		return v.exit(err)
	}
	if *file == "" {
		return v.exit(usagef("-f FILE is required"))
	}
	return v.exit(apply(ctx, v, *file, *dryRun))
}

func apply(ctx context.Context, v *verb, file string, dryRun bool) error {
	cfg, err := loadConfig(file)
	if err != nil {
		return err
	}
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	p, err := plan(ctx, c, cfg)
	if err != nil {
		return err
	}
	warnings := configWarnings(cfg, p.cur)
	if !v.json() {
		for _, ch := range p.changes {
			fmt.Fprintln(v.stdout, ch)
		}
		for _, w := range warnings {
			fmt.Fprintln(v.stdout, w)
		}
	}
	if len(p.changes) == 0 || dryRun {
		return reportApply(v, p.changes, warnings, false, dryRun, file)
	}
	for _, ch := range p.changes {
		if err := ch.do(ctx); err != nil {
			return fmt.Errorf("%s %s %s: %w", ch.Action, ch.Kind, ch.Name, err)
		}
	}
	return reportApply(v, p.changes, warnings, true, dryRun, file)
}

func loadConfig(file string) (*clusterconfig.Config, error) {
	var cfg *clusterconfig.Config
	var err error
	if file == "-" {
		cfg, err = clusterconfig.Parse(stdin)
	} else {
		cfg, err = clusterconfig.Load(file)
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cfg, nil
}

func reportApply(v *verb, changes []change, warnings []string, applied, dryRun bool, file string) error {
	if v.json() {
		if changes == nil {
			changes = []change{}
		}
		return printJSON(v.stdout, applyResult{Changes: changes, Applied: applied, Warnings: warnings})
	}
	switch {
	case len(changes) == 0:
		fmt.Fprintf(v.stdout, "no changes: the server matches %s\n", file)
	case dryRun:
		fmt.Fprintf(v.stdout, "dry run: %s not applied\n", plural(len(changes), "change"))
	default:
		fmt.Fprintf(v.stdout, "applied %s\n", plural(len(changes), "change"))
	}
	return nil
}

// planner compares the file with the server and collects the changes, in
// the order they must be made: policies, environments, queues, shares,
// then access policies.
type planner struct {
	c       *client
	cur     *serverState
	changes []change
	// policyArns maps policy names to ARNs, including those of policies
	// the plan creates, filled in when they are created.
	policyArns map[string]string
}

func plan(ctx context.Context, c *client, cfg *clusterconfig.Config) (*planner, error) {
	cur, err := readServer(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	p := &planner{c: c, cur: cur, policyArns: map[string]string{}}
	for name, pol := range cur.policies {
		p.policyArns[name] = aws.ToString(pol.Arn)
	}
	for _, pol := range cfg.SchedulingPolicies {
		if err := p.policy(pol); err != nil {
			return nil, err
		}
	}
	for _, se := range cfg.ServiceEnvironments {
		if err := p.env(se); err != nil {
			return nil, err
		}
	}
	for _, q := range cfg.JobQueues {
		if err := p.queue(q); err != nil {
			return nil, err
		}
		for _, s := range q.QuotaShares {
			p.share(q.Name, s)
		}
	}
	if err := p.accessPolicies(ctx, cfg.AccessPolicies); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *planner) add(action, kind, name string, details []string, do func(context.Context) error) {
	p.changes = append(p.changes, change{Action: action, Kind: kind, Name: name, Details: details, do: do})
}

// tagChange adds the tags the file sets that the resource lacks or has
// with another value.
func (p *planner) tagChange(kind, name, arn string, have, want map[string]string) {
	set := map[string]string{}
	var details []string
	for _, k := range sortedKeys(want) {
		if old, ok := have[k]; !ok || old != want[k] {
			set[k] = want[k]
			details = append(details, fmt.Sprintf("tag %s=%s", k, want[k]))
		}
	}
	if len(set) == 0 {
		return
	}
	p.add("update", kind, name, details, func(ctx context.Context) error {
		_, err := p.c.batch.TagResource(ctx, &batch.TagResourceInput{ResourceArn: aws.String(arn), Tags: set})
		return err
	})
}

// baseName is the name at the end of an ARN (or a name as it is).
func baseName(s string) string { return path.Base(s) }
