package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
)

// kueueClass is one submission stream of Kueue's scheduler performance
// generator (shared/bench/kueue-baseline.md).
type kueueClass struct {
	name      string
	count     int
	interval  time.Duration
	instances int
	runtime   time.Duration
	priority  int
}

// kueueShape is a Kueue generator config mapped onto quota shares.
type kueueShape struct {
	name           string
	queues, shares int
	classes        []kueueClass
}

var (
	kueueBaseline = kueueShape{name: "kueue-baseline", queues: 5, shares: 6, classes: []kueueClass{
		{"small", 350, 100 * time.Millisecond, 1, 200 * time.Millisecond, 50},
		{"medium", 100, 500 * time.Millisecond, 5, 500 * time.Millisecond, 100},
		{"large", 50, 1200 * time.Millisecond, 20, 1000 * time.Millisecond, 200},
	}}
	kueueLarge = kueueShape{name: "kueue-large", queues: 10, shares: 100, classes: []kueueClass{
		{"small", 35, 60 * time.Millisecond, 1, 150 * time.Millisecond, 50},
		{"medium", 11, 300 * time.Millisecond, 5, 350 * time.Millisecond, 100},
		{"large", 4, 700 * time.Millisecond, 20, 700 * time.Millisecond, 200},
	}}
)

// kueueUnit stands for Kueue's abstract resource.
const kueueUnit = "ml.m5.large"

// Builtin returns a built-in workload by name: "kueue-baseline",
// "kueue-large" or "random" (with parameters as "random:jobs=1000,load=0.9").
// Kueue workloads bring their own cluster; random uses cfg when it is not
// nil and makes a cluster otherwise.
func Builtin(spec string, seed uint64, cfg *clusterconfig.Config) (*Workload, error) {
	name, params, _ := strings.Cut(spec, ":")
	switch name {
	case "kueue-baseline":
		return kueueBaseline.workload(1), nil
	case "kueue-large":
		return kueueLarge.workload(1), nil
	case "random":
		ro, err := parseRandom(params)
		if err != nil {
			return nil, err
		}
		ro.Seed = seed
		return Random(ro, cfg)
	}
	return nil, fmt.Errorf("unknown workload %q (want kueue-baseline, kueue-large or random[:k=v,...])", spec)
}

// KueueBaseline and KueueLarge return the Kueue workloads bounded to
// their first queues and shares per queue (for tests).
func KueueBaseline(queues, shares int) *Workload { return kueueBaseline.bounded(queues, shares) }

// KueueLarge: see KueueBaseline.
func KueueLarge(queues, shares int) *Workload { return kueueLarge.bounded(queues, shares) }

func (k kueueShape) bounded(queues, shares int) *Workload {
	k.queues, k.shares = min(queues, k.queues), min(shares, k.shares)
	return k.workload(1)
}

// workload builds the cluster and the jobs: per queue one environment of
// shares × 20 instances, per share a LEND_AND_BORROW quota of 20 with a
// borrow limit of 500 % (Kueue's borrowingLimit 100 over nominal 20) and
// in-share preemption (withinClusterQueue: LowerPriority).
func (k kueueShape) workload(scale int) *Workload {
	w := &Workload{Name: k.name, Config: k.config()}
	for q := 0; q < k.queues; q++ {
		for s := 0; s < k.shares; s++ {
			for _, c := range k.classes {
				for n := 0; n < c.count*scale; n++ {
					w.Jobs = append(w.Jobs, Job{
						ID: fmt.Sprintf("q%d-s%d-%s-%d", q, s, c.name, n), Class: c.name, At: time.Duration(n) * c.interval,
						Queue: kueueQueue(q), Share: kueueShare(s), Priority: c.priority, InstanceType: kueueUnit,
						Count: c.instances, Runtime: c.runtime,
					})
				}
			}
		}
	}
	w.Sort()
	return w
}

func kueueQueue(q int) string { return fmt.Sprintf("cohort-%d", q) }
func kueueShare(s int) string { return fmt.Sprintf("cq-%02d", s) }

func (k kueueShape) config() *clusterconfig.Config {
	borrow := 500
	c := &clusterconfig.Config{SchedulingPolicies: []clusterconfig.SchedulingPolicy{{Name: "kueue", QuotaSharePolicy: &clusterconfig.QuotaSharePolicy{}}}}
	for q := 0; q < k.queues; q++ {
		se := fmt.Sprintf("cohort-%d-se", q)
		c.ServiceEnvironments = append(c.ServiceEnvironments, clusterconfig.ServiceEnvironment{
			Name: se, CapacityLimits: []clusterconfig.CapacityLimit{{CapacityUnit: kueueUnit, MaxCapacity: 20 * k.shares}},
		})
		jq := clusterconfig.JobQueue{Name: kueueQueue(q), Priority: 1, SchedulingPolicy: "kueue", ServiceEnvironments: []string{se}}
		for s := 0; s < k.shares; s++ {
			jq.QuotaShares = append(jq.QuotaShares, clusterconfig.QuotaShare{
				Name: kueueShare(s), CapacityLimits: []clusterconfig.CapacityLimit{{CapacityUnit: kueueUnit, MaxCapacity: 20}},
				ResourceSharingConfiguration: clusterconfig.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: &borrow},
				PreemptionConfiguration:      clusterconfig.PreemptionConfiguration{InSharePreemption: "ENABLED"},
			})
		}
		c.JobQueues = append(c.JobQueues, jq)
	}
	return c
}

// RandomOptions parameterise the random workload.
type RandomOptions struct {
	Seed uint64
	Jobs int
	// Load is the offered work as a fraction of the cluster's capacity
	// (arrivals are Poisson at the rate that gives it).
	Load float64
	// MeanRuntime is the mean of the exponential runtime distribution.
	MeanRuntime time.Duration
	// MaxCount caps instances per job (also capped by the share's limit
	// plus what it may borrow).
	MaxCount int
	// Priorities is how many priority levels jobs draw from (0, 10, 20...).
	Priorities int
	// Changes is the fraction of jobs whose priority changes later;
	// Cancels the fraction cancelled later.
	Changes, Cancels float64
	// Shares sizes the made-up cluster when no config is given.
	Shares int
}

// DefaultRandom are the random workload's defaults.
func DefaultRandom() RandomOptions {
	return RandomOptions{Jobs: 1000, Load: 0.9, MeanRuntime: time.Hour, MaxCount: 4, Priorities: 3, Changes: 0.02, Cancels: 0.01, Shares: 4}
}

func parseRandom(params string) (RandomOptions, error) {
	ro := DefaultRandom()
	if params == "" {
		return ro, nil
	}
	for _, kv := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return ro, fmt.Errorf("random workload parameter %q is not key=value", kv)
		}
		if err := ro.set(k, v); err != nil {
			return ro, fmt.Errorf("random workload parameter %s: %w", k, err)
		}
	}
	return ro, nil
}

func (ro *RandomOptions) set(k, v string) error {
	var err error
	switch k {
	case "jobs":
		ro.Jobs, err = strconv.Atoi(v)
	case "load":
		ro.Load, err = strconv.ParseFloat(v, 64)
	case "runtime":
		ro.MeanRuntime, err = parseSeconds(v, k)
	case "max-count":
		ro.MaxCount, err = strconv.Atoi(v)
	case "priorities":
		ro.Priorities, err = strconv.Atoi(v)
	case "changes":
		ro.Changes, err = strconv.ParseFloat(v, 64)
	case "cancels":
		ro.Cancels, err = strconv.ParseFloat(v, 64)
	case "shares":
		ro.Shares, err = strconv.Atoi(v)
	default:
		return fmt.Errorf("unknown (want jobs, load, runtime, max-count, priorities, changes, cancels, shares)")
	}
	return err
}

// randomTarget is a (queue, share, instance type) jobs can go to, with the
// most instances one job there may ask for.
type randomTarget struct {
	queue, share, unit string
	maxCount           int
}

// Random makes a seeded random workload on cfg (or on a made-up cluster of
// ro.Shares shares when cfg is nil).
func Random(ro RandomOptions, cfg *clusterconfig.Config) (*Workload, error) {
	if ro.Jobs < 0 || ro.Load <= 0 || ro.MeanRuntime <= 0 || ro.MaxCount < 1 || ro.Priorities < 1 || ro.Shares < 1 {
		return nil, fmt.Errorf("random workload: jobs ≥ 0, load > 0, runtime > 0, max-count ≥ 1, priorities ≥ 1 and shares ≥ 1 are required")
	}
	w := &Workload{Name: fmt.Sprintf("random(seed=%d,jobs=%d,load=%g)", ro.Seed, ro.Jobs, ro.Load)}
	if cfg == nil {
		cfg = randomConfig(ro.Shares)
		w.Config = cfg
	}
	targets, capacity := randomTargets(cfg, ro.MaxCount)
	if len(targets) == 0 {
		return nil, fmt.Errorf("random workload: the config has no quota share to submit to")
	}
	rng := rand.New(rand.NewPCG(ro.Seed, 0x5348415251)) // "SHARQ"
	meanCount := 0.0
	for _, t := range targets {
		meanCount += float64(t.maxCount+1) / 2
	}
	meanCount /= float64(len(targets))
	// Offered load = rate × mean work / capacity.
	rate := ro.Load * float64(capacity) / (meanCount * ro.MeanRuntime.Seconds())
	at := 0.0
	for i := 0; i < ro.Jobs; i++ {
		at += rng.ExpFloat64() / rate
		w.Jobs = append(w.Jobs, randomJob(rng, ro, targets, i, time.Duration(at*1e9)))
	}
	w.Sort()
	return w, nil
}

func randomJob(rng *rand.Rand, ro RandomOptions, targets []randomTarget, i int, at time.Duration) Job {
	t := targets[rng.IntN(len(targets))]
	runtime := time.Duration(math.Max(1, rng.ExpFloat64()*ro.MeanRuntime.Seconds()) * 1e9).Round(time.Second)
	j := Job{
		ID: fmt.Sprintf("job-%07d", i), At: at, Queue: t.queue, Share: t.share, InstanceType: t.unit,
		Count: 1 + rng.IntN(t.maxCount), Runtime: runtime, Priority: 10 * rng.IntN(ro.Priorities),
	}
	if rng.Float64() < ro.Changes {
		j.Changes = append(j.Changes, Change{At: at + time.Duration(rng.Float64()*float64(runtime)), Priority: 10 * rng.IntN(ro.Priorities)})
	}
	if rng.Float64() < ro.Cancels {
		j.Changes = append(j.Changes, Change{At: at + time.Duration(rng.Float64()*2*float64(runtime)), Cancel: true})
	}
	return j
}

// randomTargets lists where jobs can go, and the total capacity of the
// environments of quota-share queues.
func randomTargets(cfg *clusterconfig.Config, maxCount int) ([]randomTarget, int) {
	var out []randomTarget
	capacity := 0
	for qi := range cfg.JobQueues {
		q := &cfg.JobQueues[qi]
		if !cfg.QuotaQueue(q) {
			continue
		}
		for _, l := range cfg.Env(q.ServiceEnvironments[0]).CapacityLimits {
			capacity += l.MaxCapacity
		}
		for _, s := range q.QuotaShares {
			for _, l := range s.CapacityLimits {
				out = append(out, randomTarget{queue: q.Name, share: s.Name, unit: l.CapacityUnit, maxCount: max(1, min(maxCount, l.MaxCapacity))})
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		return out[a].queue+"/"+out[a].share+"/"+out[a].unit < out[b].queue+"/"+out[b].share+"/"+out[b].unit
	})
	return out, capacity
}

// randomConfig is a cluster of n shares of 8 ml.g5.xlarge each, cycling
// through the strategies, with in-share preemption on every other share.
func randomConfig(n int) *clusterconfig.Config {
	const unit = "ml.g5.xlarge"
	borrow := 200
	c := &clusterconfig.Config{
		SchedulingPolicies:  []clusterconfig.SchedulingPolicy{{Name: "random", QuotaSharePolicy: &clusterconfig.QuotaSharePolicy{}}},
		ServiceEnvironments: []clusterconfig.ServiceEnvironment{{Name: "random-se", CapacityLimits: []clusterconfig.CapacityLimit{{CapacityUnit: unit, MaxCapacity: 8 * n}}}},
	}
	q := clusterconfig.JobQueue{Name: "random", Priority: 1, SchedulingPolicy: "random", ServiceEnvironments: []string{"random-se"}}
	strategies := []string{"LEND_AND_BORROW", "LEND", "RESERVE"}
	for i := 0; i < n; i++ {
		s := clusterconfig.QuotaShare{
			Name: fmt.Sprintf("team-%02d", i), CapacityLimits: []clusterconfig.CapacityLimit{{CapacityUnit: unit, MaxCapacity: 8}},
			ResourceSharingConfiguration: clusterconfig.ResourceSharingConfiguration{Strategy: strategies[i%3]},
			PreemptionConfiguration:      clusterconfig.PreemptionConfiguration{InSharePreemption: []string{"ENABLED", "DISABLED"}[i%2]},
		}
		if s.ResourceSharingConfiguration.Strategy == "LEND_AND_BORROW" {
			s.ResourceSharingConfiguration.BorrowLimit = &borrow
		}
		q.QuotaShares = append(q.QuotaShares, s)
	}
	c.JobQueues = []clusterconfig.JobQueue{q}
	return c
}
