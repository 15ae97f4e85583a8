package access

import (
	"context"
	"errors"
	"sync"
	"time"
)

// CachedKeys is a KeyStore that remembers the keys and policies it reads
// (and their absence) for a while, so that authenticating and authorizing
// a request reads the store at most once a TTL per key and policy. Its own
// writes forget everything; another process's are seen within the TTL.
type CachedKeys struct {
	KeyStore
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	keys     map[string]cached[StoredKey]
	policies map[string]cached[Policy]
}

type cached[T any] struct {
	v   T
	err error
	at  time.Time
}

// maxCached bounds each map: requests signed with made-up key IDs must
// not grow it without end.
const maxCached = 10_000

// NewCachedKeys caches store's reads for ttl.
func NewCachedKeys(store KeyStore, ttl time.Duration) *CachedKeys {
	c := &CachedKeys{KeyStore: store, ttl: ttl, now: time.Now}
	c.forget()
	return c
}

func (c *CachedKeys) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = map[string]cached[StoredKey]{}
	c.policies = map[string]cached[Policy]{}
}

func (c *CachedKeys) Key(ctx context.Context, id string) (StoredKey, error) {
	return lookup(c, c.keys, id, func() (StoredKey, error) { return c.KeyStore.Key(ctx, id) })
}

func (c *CachedKeys) Policy(ctx context.Context, name string) (Policy, error) {
	return lookup(c, c.policies, name, func() (Policy, error) { return c.KeyStore.Policy(ctx, name) })
}

// lookup answers from m when it holds name's answer of less than a TTL
// ago, and otherwise reads it. Only answers and ErrNotFound are kept;
// other errors are read again.
func lookup[T any](c *CachedKeys, m map[string]cached[T], name string, read func() (T, error)) (T, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := m[name]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.v, e.err
	}
	v, err := read()
	if err == nil || errors.Is(err, ErrNotFound) {
		c.mu.Lock()
		if len(m) >= maxCached {
			clear(m)
		}
		m[name] = cached[T]{v, err, now}
		c.mu.Unlock()
	}
	return v, err
}

func (c *CachedKeys) CreateKey(ctx context.Context, k StoredKey) error {
	defer c.forget()
	return c.KeyStore.CreateKey(ctx, k)
}

func (c *CachedKeys) SetKeyDisabled(ctx context.Context, id string, disabled bool) error {
	defer c.forget()
	return c.KeyStore.SetKeyDisabled(ctx, id, disabled)
}

func (c *CachedKeys) DeleteKey(ctx context.Context, id string) error {
	defer c.forget()
	return c.KeyStore.DeleteKey(ctx, id)
}

func (c *CachedKeys) PutPolicy(ctx context.Context, p Policy) error {
	defer c.forget()
	return c.KeyStore.PutPolicy(ctx, p)
}
