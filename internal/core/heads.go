package core

// Reads from outside the engine's lock need a waiting job's reason without
// the core. A job's reason follows from where it waits (its share, and
// whether it is set aside as infeasible) and from its share's head: the
// head's own reason, or "blocked by the head" for the jobs behind it. These
// queries give both, and tell when each may have changed.

// Place is where a RUNNABLE job waits.
type Place struct {
	Queue, Share string
	// Infeasible is why the job can never run as configured; its Code is
	// ReasonNone for a job in its share's order.
	Infeasible Reason
}

// WaitPlace tells where a job waits; ok is false for a job that is
// dispatched, ended or unknown. Only a change to the job itself or a
// configuration change (Reconfigurations) moves it.
func (c *Core) WaitPlace(id string) (Place, bool) {
	j := c.lookup(id)
	if j == nil || (j.state != runnable && j.state != infeasible) {
		return Place{}, false
	}
	p := Place{Queue: j.sh.q.name, Share: j.sh.name}
	if j.state == infeasible {
		p.Infeasible = c.infeasibleReason(j)
	}
	return p, true
}

// Head is a share's first feasible waiting job and why it waits; Job is
// empty when none waits.
type Head struct {
	Queue, Share string
	Job          string
	Reason       Reason
}

// Heads calls fn with the head of every share, or, with changedOnly, of
// every share in the pools that the last Step ran or that changed since.
// A head and its reason depend only on its pool and, while the head is
// held back or names a protected job (minruntime.go), on the instant; the
// end of a protection that a victim search walked over marks its pool. A pool changes only by marking itself for the
// next Step, and settle keeps a held-back head's share marked until a
// Step at a later instant, so a head left out is as it was when last
// given. A copy (Clone) knows only the Steps it ran itself.
func (c *Core) Heads(changedOnly bool, fn func(Head)) {
	each := func(e *env) {
		if c.envs[e.name] != e {
			return // deleted
		}
		for _, q := range e.queues {
			for _, s := range q.shares {
				h := Head{Queue: q.name, Share: s.name}
				if j := s.head(); j != nil {
					h.Job, h.Reason = j.id, c.headReason(j)
				}
				fn(h)
			}
		}
	}
	if !changedOnly {
		for _, e := range c.envs {
			each(e)
		}
		return
	}
	for _, e := range c.stepped {
		each(e)
	}
	for _, e := range c.dirtyEnvs {
		each(e)
	}
}

// Reconfigurations counts the configuration changes applied: the only
// events that move a waiting job between feasible and infeasible without
// the job itself changing.
func (c *Core) Reconfigurations() uint64 { return c.reconfigs }
