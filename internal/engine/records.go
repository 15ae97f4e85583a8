package engine

import (
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// Job statuses, as the engine's code names them.
const (
	StatusSubmitted = record.StatusSubmitted
	StatusRunnable  = record.StatusRunnable
	StatusScheduled = record.StatusScheduled
	StatusStarting  = record.StatusStarting
	StatusRunning   = record.StatusRunning
	StatusSucceeded = record.StatusSucceeded
	StatusFailed    = record.StatusFailed
)

func terminal(status string) bool { return record.Terminal(status) }

func dispatchedStatus(status string) bool {
	return status == StatusScheduled || status == StatusStarting || status == StatusRunning
}

// base formats the ARNs of this server's resources.
func (e *Engine) base() arn.Base {
	return arn.Base{Partition: e.opts.Partition, Region: e.opts.Region, AccountID: e.opts.AccountID}
}

// jobID accepts a job ID or its ARN of this server.
func (e *Engine) jobID(idOrArn string) string {
	return batchmodel.OwnName(e.base(), idOrArn, arn.ServiceJob)
}
