package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lease is a server's hold on the leadership. While it holds, every Commit
// of its store checks in the database that the lease is still its own.
// It is renewed in the background; Done is closed once it is lost
// (another server took over, or it could not be renewed in time) or
// resigned, and the server must stop writing and acting at once.
type Lease struct {
	s      *Store
	term   int64
	holder string
	ttl    time.Duration

	once sync.Once
	done chan struct{}
	err  error
	stop chan struct{} // closed by Resign
	wg   sync.WaitGroup
}

// Term is the lease's term: it grows by one at every takeover.
func (l *Lease) Term() int64 { return l.term }

// Done is closed when the lease is lost or resigned.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Err tells why the lease ended, once Done is closed.
func (l *Lease) Err() error {
	<-l.done
	return l.err
}

func (l *Lease) lose(err error) {
	l.once.Do(func() {
		l.err = err
		l.s.fence.CompareAndSwap(l, lostLease)
		close(l.done)
	})
}

// lostLease fences a store whose lease ended: its commits then fail.
var lostLease = &Lease{term: -1}

// LeaderInfo is who holds the lease, as the database says.
type LeaderInfo struct {
	Term    int64
	Holder  string
	Address string // where the leader serves its API
	Expires time.Time
}

// Leader reads who holds the lease; Holder is empty before anyone took it.
func (s *Store) Leader(ctx context.Context) (LeaderInfo, error) {
	var li LeaderInfo
	err := s.pool.QueryRow(ctx, `SELECT term, holder, address, expires_at FROM leader WHERE id = 1`).
		Scan(&li.Term, &li.Holder, &li.Address, &li.Expires)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("read the lease: %w", err)
	}
	return li, nil
}

// Campaign waits until holder (a name unique to this server process) takes
// the lease, trying every ttl/4, and returns it. address is where holder
// serves, for the others to forward to. A takeover increments the term; it
// happens only once the previous lease has expired in the database's
// clock, or was resigned.
func (s *Store) Campaign(ctx context.Context, holder, address string, ttl time.Duration) (*Lease, error) {
	const take = `UPDATE leader SET term = term + 1, holder = $1, address = $2,
			expires_at = now() + $3 * interval '1 millisecond'
		WHERE id = 1 AND expires_at < now() RETURNING term`
	for {
		started := time.Now()
		var term int64
		err := s.pool.QueryRow(ctx, take, holder, address, ttl.Milliseconds()).Scan(&term)
		switch {
		case err == nil:
			l := &Lease{s: s, term: term, holder: holder, ttl: ttl, done: make(chan struct{}), stop: make(chan struct{})}
			s.fence.Store(l)
			l.wg.Go(func() { l.renew(started) })
			return l, nil
		case !errors.Is(err, pgx.ErrNoRows):
			s.opts.logger.Warn("campaign for the lease", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(ttl / 4):
		}
	}
}

// renew extends the lease every ttl/4. The lease counts as held until ttl
// after the last renewal began, less a margin for the clocks' drift; past
// that without a renewal it is lost, before the database lets another
// server take it.
func (l *Lease) renew(since time.Time) {
	const extend = `UPDATE leader SET expires_at = now() + $3 * interval '1 millisecond'
		WHERE id = 1 AND term = $1 AND holder = $2`
	validUntil := since.Add(l.ttl - l.ttl/5)
	tick := time.NewTicker(l.ttl / 4)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.done:
			return
		case <-tick.C:
		}
		if time.Now().After(validUntil) {
			l.lose(errors.New("the lease could not be renewed in time"))
			return
		}
		started := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), validUntil)
		tag, err := l.s.pool.Exec(ctx, extend, l.term, l.holder, l.ttl.Milliseconds())
		cancel()
		switch {
		case err != nil:
			l.s.opts.logger.Warn("renew the lease", "term", l.term, "err", err)
		case tag.RowsAffected() == 0:
			l.lose(fmt.Errorf("term %d ended: another server took the lease", l.term))
			return
		default:
			validUntil = started.Add(l.ttl - l.ttl/5)
		}
	}
}

// Resign gives the lease up at once, so that another server takes over at
// its next try rather than after the lease expires. The store's commits
// fail from now on.
func (l *Lease) Resign(ctx context.Context) error {
	l.lose(errors.New("resigned"))
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
	_, err := l.s.pool.Exec(ctx, `UPDATE leader SET expires_at = '-infinity' WHERE id = 1 AND term = $1 AND holder = $2`,
		l.term, l.holder)
	if err != nil {
		return fmt.Errorf("resign the lease: %w", err)
	}
	return nil
}
