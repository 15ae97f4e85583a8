package batchmodel

import (
	"maps"
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
)

// MaxTags is AWS's limit of tags on one resource.
const MaxTags = 50

// CheckTagLimit tells whether adding tags to a resource's cur keeps it
// within MaxTags.
func CheckTagLimit(cur, tags map[string]string) error {
	if n := len(cur) + len(tags); n > MaxTags {
		for k := range tags {
			if _, ok := cur[k]; ok {
				n--
			}
		}
		if n > MaxTags {
			return invalidf("A resource can have at most %d tags", MaxTags)
		}
	}
	return nil
}

// tagged is a resource found by ARN, with its tags and what puts it
// with other tags.
type tagged struct {
	tags map[string]string
	with func(tags map[string]string) Change
}

// find finds the resource of an ARN: a scheduling policy, a service
// environment, a job queue or a quota share of this model.
func (m *Model) find(resource string) (tagged, bool) {
	if p := m.policies[resource]; p != nil {
		return tagged{p.Tags, func(t map[string]string) Change {
			next := *p
			next.Tags = t
			return Change{Puts: []Put{{Kind: KindPolicy, ARN: resource, Record: &next.SchedulingPolicy}}, policy: &next}
		}}, true
	}
	if !strings.HasPrefix(resource, "arn:") {
		return tagged{}, false
	}
	if name := m.ownName(resource, arn.ServiceEnvironment); name != "" {
		if se := m.envs[name]; se != nil {
			return tagged{se.Tags, func(t map[string]string) Change {
				next := *se
				next.Tags = t
				return Change{Puts: []Put{{Kind: KindEnv, ARN: resource, Record: &next.ServiceEnvironment}}, env: &next}
			}}, true
		}
	}
	if rest := m.ownName(resource, arn.JobQueue); rest != "" {
		if strings.Contains(rest, "/quota-share/") {
			if _, s, err := m.findShare(resource); err == nil {
				return tagged{s.Tags, func(t map[string]string) Change {
					next := *s
					next.Tags = t
					return Change{Puts: []Put{{Kind: KindShare, ARN: resource, Record: &next.QuotaShare}}, share: &next}
				}}, true
			}
		} else if q := m.queues[rest]; q != nil {
			return tagged{q.Tags, func(t map[string]string) Change {
				next := *q
				next.Tags = t
				return Change{Puts: []Put{{Kind: KindQueue, ARN: resource, Record: &next.JobQueue}}, queue: &next}
			}}, true
		}
	}
	return tagged{}, false
}

// Tags returns the tags of the resource an ARN names; ok is false when it
// names none of the model's.
func (m *Model) Tags(resource string) (tags map[string]string, ok bool) {
	r, ok := m.find(resource)
	return r.tags, ok
}

// TagResource adds tags to the resource an ARN names; ok is false when it
// names none of the model's.
func (m *Model) TagResource(resource string, tags map[string]string) (ch Change, ok bool, err error) {
	r, ok := m.find(resource)
	if !ok {
		return Change{}, false, nil
	}
	if err := CheckTagLimit(r.tags, tags); err != nil {
		return Change{}, true, err
	}
	next := make(map[string]string, len(r.tags)+len(tags))
	maps.Copy(next, r.tags)
	maps.Copy(next, tags)
	return r.with(next), true, nil
}

// UntagResource removes tags from the resource an ARN names; ok is false
// when it names none of the model's.
func (m *Model) UntagResource(resource string, keys []string) (ch Change, ok bool) {
	r, ok := m.find(resource)
	if !ok {
		return Change{}, false
	}
	next := maps.Clone(r.tags) // nil stays nil
	for _, k := range keys {
		delete(next, k)
	}
	return r.with(next), true
}
