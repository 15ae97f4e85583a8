package sqlite

import (
	"fmt"
	"time"
)

// checkpointPause spaces background checkpoints, so one checkpoint copies
// the pages of many commits, and a page that several commits changed is
// copied once.
const checkpointPause = 100 * time.Millisecond

// checkpointLoop copies committed WAL pages into the database file on its
// own connection, after commits and at most once per checkpointPause. With
// SQLite's automatic checkpoint, the commit that crosses the threshold pays
// for copying and syncing up to thousands of pages, and every commit queued
// behind it waits; here commits only append to the WAL.
func (s *Store) checkpointLoop() {
	defer close(s.ckptDone)
	for range s.kick {
		if err := s.checkpoint(); err != nil {
			s.opts.logger.Warn("checkpoint failed", "err", err)
		}
		select {
		case <-s.stopped:
			return
		case <-time.After(checkpointPause):
		}
	}
}

// checkpoint runs a passive checkpoint: it copies what it can without
// waiting for readers or the writer, and never blocks them.
func (s *Store) checkpoint() error {
	var busy, walPages, copied int
	err := s.ckpt.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &walPages, &copied)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.checkpoints.Add(1)
	return nil
}

// kickCheckpoint wakes the checkpointer without waiting for it.
func (s *Store) kickCheckpoint() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
