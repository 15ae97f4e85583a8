package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// validUntil is when the lease stops counting as held (see renew), as
	// monotonic time since base.
	base       time.Time
	validUntil atomic.Int64

	once sync.Once
	done chan struct{}
	err  error
	stop chan struct{} // closed by Resign

	renewals atomic.Int64
	wg       sync.WaitGroup
}

// Renewals counts the lease's successful renewals.
func (l *Lease) Renewals() int64 { return l.renewals.Load() }

// Term is the lease's term: it grows by one at every takeover.
func (l *Lease) Term() int64 { return l.term }

// Held tells whether the lease is held now: not ended, and renewed
// recently enough, by this server's monotonic clock, that no other server
// can have taken it over. A server checks it before it acts.
func (l *Lease) Held() bool {
	select {
	case <-l.done:
		return false
	default:
	}
	return time.Since(l.base) < time.Duration(l.validUntil.Load())
}

// extend counts the lease as held until a margin short of ttl after since,
// when the renewal (or the takeover) that succeeded was sent.
func (l *Lease) extend(since time.Time) {
	l.validUntil.Store(int64(since.Sub(l.base) + l.ttl - l.ttl/5))
}

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
	// A resigned or never taken lease expires at -infinity, which no
	// time.Time holds: it reads as the epoch, long past.
	err := s.pool.QueryRow(ctx, `SELECT term, holder, address, GREATEST(expires_at, 'epoch') FROM leader WHERE id = 1`).
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
			l := &Lease{s: s, term: term, holder: holder, ttl: ttl, base: started, done: make(chan struct{}), stop: make(chan struct{})}
			l.extend(started)
			s.fence.Store(l)
			l.wg.Go(l.renew)
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
func (l *Lease) renew() {
	const extend = `UPDATE leader SET expires_at = now() + $3 * interval '1 millisecond'
		WHERE id = 1 AND term = $1 AND holder = $2`
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
		if !l.Held() {
			l.lose(errors.New("the lease could not be renewed in time"))
			return
		}
		started := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), l.base.Add(time.Duration(l.validUntil.Load())))
		tag, err := l.s.pool.Exec(ctx, extend, l.term, l.holder, l.ttl.Milliseconds())
		cancel()
		switch {
		case err != nil:
			l.s.opts.logger.Warn("renew the lease", "term", l.term, "err", err)
		case tag.RowsAffected() == 0:
			l.lose(fmt.Errorf("term %d ended: another server took the lease", l.term))
			return
		default:
			l.renewals.Add(1)
			l.extend(started)
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
