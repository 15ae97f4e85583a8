package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/sharq-dev/sharq/internal/jobevents"
)

// TransitionLogger is a jobevents.Observer that logs each job status change
// at info level and each preemption at info, after the cycle that made it
// is committed, so that the log never shows a change the store lost.
type TransitionLogger struct {
	Log *slog.Logger
}

// ObserveCycle logs the cycle's transitions and preemptions.
func (l TransitionLogger) ObserveCycle(_ time.Duration, events []jobevents.Event, _ []jobevents.Dispatch, preempts []jobevents.Preempt) {
	if !l.Log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	for _, ev := range events {
		d := ev.Job
		l.Log.Info("job status", "job", d.JobID, "name", d.JobName, "share", d.QuotaShareName,
			"status", d.Status, "reason", d.StatusReason)
	}
	for _, p := range preempts {
		l.Log.Info("preemption", "queue", p.Queue, "share", p.Share, "kind", p.Kind)
	}
}
