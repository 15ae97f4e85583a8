package engine

import (
	"slices"
	"strings"
)

// MinIDFragment is the shortest part of a job ID that MatchJobIDs takes:
// shorter ones would match too many jobs to be of use.
const MinIDFragment = 4

// MatchJobIDs returns the IDs of the jobs the engine holds (the live ones
// and those that ended since it started, until retention purges them)
// that begin or end with fragment, sorted, at most limit of them. Tables
// print the last 8 characters of an ID, and people also copy the first
// ones. It walks every job: it serves a person's command, not a hot path.
func (e *Engine) MatchJobIDs(fragment string, limit int) []string {
	fragment = strings.ToLower(fragment)
	if len(fragment) < MinIDFragment {
		return nil
	}
	e.rlock()
	var ids []string
	for id := range e.jobs {
		if strings.HasPrefix(id, fragment) || strings.HasSuffix(id, fragment) {
			ids = append(ids, id)
		}
	}
	e.mu.RUnlock()
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}
