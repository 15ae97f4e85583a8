package store

import "fmt"

// UsageColumns are the usage table's columns as both SQL stores name
// them, in the order StreamUsage scans them.
const UsageColumns = `attempt, seq, job, queue, share, share_id, owner, kind, peer, instances, gpus, start_at, stop_at, preempted`

// Rows is the part of a query's result StreamUsage reads: database/sql's
// *sql.Rows and pgx's Rows both have it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// StreamUsage calls fn for every row of UsageColumns; the caller closes
// rows.
func StreamUsage(rows Rows, fn func(UsageSegment) error) error {
	for rows.Next() {
		var u UsageSegment
		if err := rows.Scan(&u.Attempt, &u.Seq, &u.Job, &u.Queue, &u.Share, &u.ShareID, &u.Owner, &u.Kind, &u.Peer,
			&u.Instances, &u.GPUs, &u.Start, &u.Stop, &u.Preempted); err != nil {
			return fmt.Errorf("read usage: %w", err)
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	return nil
}
