package kube

import (
	"sync"

	"github.com/sharq-dev/sharq/internal/executor"
)

// outbox delivers updates in order without ever blocking their sender on
// a slow reader.
type outbox struct {
	ch     chan executor.Update
	mu     sync.Mutex
	queue  []executor.Update
	signal chan struct{}
}

func newOutbox() *outbox {
	return &outbox{ch: make(chan executor.Update), signal: make(chan struct{}, 1)}
}

func (o *outbox) send(u executor.Update) {
	o.mu.Lock()
	o.queue = append(o.queue, u)
	o.mu.Unlock()
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

func (o *outbox) start(done <-chan struct{}) {
	go func() {
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
			case <-o.signal:
			case <-done:
				return
			}
		}
	}()
}
