package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// A waiting job's estimated start, as the server's scheduler run forward
// says (sharqapi.StartEstimate): a short cell for tables, a sentence for
// describe.

// etaWidth is what the ETA column takes of a row (5 characters and a
// separator), and the one more that RUNNABLE takes in the status column
// over RUNNING: the name gives it up, so that a row up to its age still
// fits in 80 columns.
const etaWidth = 8

// hasETA tells whether any row has an estimate: only then do tables show
// the column.
func hasETA(rows []jobRow) bool {
	for _, r := range rows {
		if r.ETA != nil {
			return true
		}
	}
	return false
}

// etaCell renders an estimate in at most 5 characters: "8m30s" or "13m"
// from now, "now", ">24h" (not within), "?" (no basis), "never"; "-" for
// none.
func etaCell(e *sharqapi.StartEstimate) string {
	if e == nil {
		return "-"
	}
	switch e.Kind {
	case "ESTIMATED":
		if d := time.UnixMilli(e.At).Sub(now()); d >= time.Second {
			return shortDuration(d)
		}
		return "now"
	case "NOT_WITHIN":
		d := time.UnixMilli(e.At).Sub(now())
		if d >= time.Hour {
			return fmt.Sprintf(">%dh", d/time.Hour)
		}
		return fmt.Sprintf(">%dm", d/time.Minute)
	case "NO_BASIS":
		return "?"
	case "NEVER":
		return "never"
	}
	return "-"
}

// shortDuration renders d in at most 5 characters, as duration does but
// in whole minutes from 10 minutes to an hour.
func shortDuration(d time.Duration) string {
	if d >= 10*time.Minute && d < time.Hour {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return duration(d)
}

// hours renders a horizon coarsely: whole hours as "24h", else as duration
// does.
func hours(d time.Duration) string {
	d = d.Round(time.Minute)
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return duration(d)
}

// etaLine is the estimate as describe says it.
func etaLine(e *sharqapi.StartEstimate) string {
	if e == nil {
		return "not estimated yet"
	}
	switch e.Kind {
	case "ESTIMATED":
		d := time.UnixMilli(e.At).Sub(now())
		if len(e.Basis) == 0 || d < time.Second {
			return "now"
		}
		return fmt.Sprintf("%s (in %s), estimated from %s", clock(e.At), duration(d), basisText(e.Basis))
	case "NOT_WITHIN":
		return fmt.Sprintf("not within %s (not before %s)", hours(time.UnixMilli(e.At).Sub(now())), clock(e.At))
	case "NO_BASIS":
		return "unknown: the capacity it waits for is held by jobs that declare no max runtime or time limit, " +
			"and their shares have no run time history"
	case "NEVER":
		return "never, as configured"
	}
	return e.Kind
}

// basisText names what an estimate rests on: "max runtime + run time
// history".
func basisText(codes []string) string {
	names := map[string]string{"MAX_RUNTIME": "max runtime", "TIME_LIMIT": "time limit", "HISTORY": "run time history"}
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = names[c]
		if out[i] == "" {
			out[i] = strings.ToLower(c)
		}
	}
	return strings.Join(out, " + ")
}
