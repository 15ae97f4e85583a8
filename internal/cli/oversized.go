package cli

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// A quota share's limit above its environment's capacity is accepted, as
// AWS accepts it, but the share can never hold more than the environment
// has: apply and shares say so.

// oversizedLimit is the warning for one share and unit.
func oversizedLimit(share, unit string, limit int, env string, capacity int) string {
	return fmt.Sprintf("warning: quota share %s's limit of %d %s is above the %d of service environment %s: it can never hold more than %d",
		share, limit, unit, capacity, env, capacity)
}

// usageWarnings warns of the shares of q whose limits exceed its
// environment's capacity.
func usageWarnings(q sharqapi.QueueUsage) []string {
	if q.ServiceEnvironment == "" {
		return nil
	}
	var out []string
	for _, s := range q.Shares {
		for _, o := range readmodel.Oversized(q.Capacity, s.Units) {
			out = append(out, oversizedLimit(s.Name, o.Unit, o.Limit, q.ServiceEnvironment, o.Capacity))
		}
	}
	return out
}

// configWarnings warns of the shares of the file whose limits exceed the
// capacity of their queue's environment: as the file gives it, else as
// the server has it.
func configWarnings(cfg *clusterconfig.Config, cur *serverState) []string {
	envCapacity := func(name string) map[string]int {
		m := map[string]int{}
		for _, se := range cfg.ServiceEnvironments {
			if se.Name == name {
				for _, l := range se.CapacityLimits {
					m[l.CapacityUnit] = l.MaxCapacity
				}
				return m
			}
		}
		if se, ok := cur.envs[name]; ok {
			for _, l := range se.CapacityLimits {
				m[aws.ToString(l.CapacityUnit)] = int(aws.ToInt32(l.MaxCapacity))
			}
			return m
		}
		return nil // unknown: the plan fails on it anyway
	}
	var out []string
	for _, q := range cfg.JobQueues {
		if len(q.ServiceEnvironments) == 0 {
			continue
		}
		env := q.ServiceEnvironments[0]
		capacity := envCapacity(env)
		if capacity == nil {
			continue
		}
		for _, s := range q.QuotaShares {
			for _, l := range s.CapacityLimits {
				if c := capacity[l.CapacityUnit]; l.MaxCapacity > c {
					out = append(out, oversizedLimit(q.Name+"/"+s.Name, l.CapacityUnit, l.MaxCapacity, env, c))
				}
			}
		}
	}
	return out
}
