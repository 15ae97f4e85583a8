package executor

import "sync"

// Outbox delivers an executor's updates in order without ever blocking
// their sender on a slow reader: reporting never waits for the engine.
type Outbox struct {
	mu    sync.Mutex
	queue []Update
	wake  chan struct{}
	ch    chan Update
}

// NewOutbox returns an outbox; Run delivers what is put in it.
func NewOutbox() *Outbox {
	return &Outbox{wake: make(chan struct{}, 1), ch: make(chan Update, 256)}
}

// Put queues u for delivery.
func (o *Outbox) Put(u Update) {
	o.mu.Lock()
	o.queue = append(o.queue, u)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Updates is the channel Run delivers to (Executor.Updates).
func (o *Outbox) Updates() <-chan Update { return o.ch }

// Run delivers queued updates until done is closed, then closes Updates.
func (o *Outbox) Run(done <-chan struct{}) {
	defer close(o.ch)
	for {
		o.mu.Lock()
		q := o.queue
		o.queue = nil
		o.mu.Unlock()
		for _, u := range q {
			select {
			case o.ch <- u:
			case <-done:
				return
			}
		}
		select {
		case <-o.wake:
		case <-done:
			return
		}
	}
}
