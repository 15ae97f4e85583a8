package memstore_test

import (
	"sync"
	"testing"

	"github.com/sharq-dev/sharq/internal/sim/memstore"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	var mu sync.Mutex
	opened := map[*testing.T]*memstore.Store{}
	storetest.Run(t, func(t *testing.T) store.Store {
		mu.Lock()
		defer mu.Unlock()
		s := memstore.New()
		if prev := opened[t]; prev != nil {
			s = memstore.Reopen(prev)
		}
		opened[t] = s
		return s
	})
}
