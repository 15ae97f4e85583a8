package access

import (
	"context"
	"errors"
	"testing"
	"time"
)

// countingStore is a KeyStore of one key that counts its reads.
type countingStore struct {
	KeyStore
	reads    int
	disabled bool
}

func (s *countingStore) Key(_ context.Context, id string) (StoredKey, error) {
	s.reads++
	if id != "K" {
		return StoredKey{}, ErrNotFound
	}
	return StoredKey{ID: "K", Disabled: s.disabled}, nil
}

func (s *countingStore) SetKeyDisabled(_ context.Context, _ string, d bool) error {
	s.disabled = d
	return nil
}

// Ensure reads are served from the cache within the TTL, absences too,
// and the cache's own writes are seen at once.
func TestCachedKeys(t *testing.T) {
	store := &countingStore{}
	c := NewCachedKeys(store, time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	for range 3 {
		c.Key(t.Context(), "K")
		if _, err := c.Key(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing key: %v", err)
		}
	}
	if store.reads != 2 {
		t.Errorf("%d reads within the TTL, want 2", store.reads)
	}
	c.SetKeyDisabled(t.Context(), "K", true)
	if k, _ := c.Key(t.Context(), "K"); !k.Disabled || store.reads != 3 {
		t.Errorf("after its own write: %+v, %d reads", k, store.reads)
	}
	store.disabled = false // another process's write
	now = now.Add(1500 * time.Millisecond)
	if k, _ := c.Key(t.Context(), "K"); k.Disabled {
		t.Error("another process's write not seen after the TTL")
	}
}
