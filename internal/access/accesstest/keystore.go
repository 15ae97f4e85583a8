package accesstest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/access"
)

// Keys is an access.KeyStore in memory.
type Keys struct {
	mu       sync.Mutex
	keys     map[string]access.StoredKey
	made     bool // a key was ever created
	policies map[string]access.Policy
	audit    []access.AuditEntry
}

var (
	_ access.KeyStore   = (*Keys)(nil)
	_ access.AuditStore = (*Keys)(nil)
)

func (m *Keys) AppendAudit(_ context.Context, entries []access.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		e.Seq = int64(len(m.audit) + 1)
		m.audit = append(m.audit, e)
	}
	return nil
}

func (m *Keys) PruneAudit(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.audit[:0]
	for _, e := range m.audit {
		if !e.Time.Before(before) {
			kept = append(kept, e)
		}
	}
	n := int64(len(m.audit) - len(kept))
	m.audit = kept
	return n, nil
}

func (m *Keys) Audit(_ context.Context, after int64, limit int) ([]access.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []access.AuditEntry
	for _, e := range m.audit {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *Keys) CreateKey(_ context.Context, k access.StoredKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]access.StoredKey{}
	}
	for _, o := range m.keys {
		if o.ID == k.ID || o.Name == k.Name {
			return access.ErrExists
		}
	}
	m.keys[k.ID] = k
	m.made = true
	return nil
}

func (m *Keys) KeysEverMade(context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.made, nil
}

func (m *Keys) Key(_ context.Context, id string) (access.StoredKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		return k, access.ErrNotFound
	}
	return k, nil
}

func (m *Keys) Keys(context.Context) ([]access.StoredKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []access.StoredKey
	for _, k := range m.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b access.StoredKey) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *Keys) SetKeyDisabled(_ context.Context, id string, disabled bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		return access.ErrNotFound
	}
	k.Disabled = disabled
	m.keys[id] = k
	return nil
}

func (m *Keys) DeleteKey(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.keys[id]; !ok {
		return access.ErrNotFound
	}
	delete(m.keys, id)
	return nil
}

func (m *Keys) PutPolicy(_ context.Context, p access.Policy) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.policies == nil {
		m.policies = map[string]access.Policy{}
	}
	m.policies[p.Name] = p
	return nil
}

func (m *Keys) Policy(_ context.Context, name string) (access.Policy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.policies[name]
	if !ok {
		return p, access.ErrNotFound
	}
	return p, nil
}

func (m *Keys) Policies(context.Context) ([]access.Policy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []access.Policy
	for _, p := range m.policies {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b access.Policy) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// TestAuditStore is the conformance suite every access.AuditStore passes;
// open returns a new, empty store.
func TestAuditStore(t *testing.T, open func(t *testing.T) access.AuditStore) {
	s := open(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := func(op string) access.AuditEntry {
		return access.AuditEntry{Time: at, Key: "team-a", AccessKeyID: "SKIAA", Operation: op, Resource: "*", Result: "OK", RequestID: "r"}
	}
	if err := s.AppendAudit(t.Context(), []access.AuditEntry{e("batch:A"), e("batch:B")}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(t.Context(), []access.AuditEntry{e("batch:C")}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Audit(t.Context(), 1, 10)
	want := []access.AuditEntry{e("batch:B"), e("batch:C")}
	want[0].Seq, want[1].Seq = 2, 3
	if diff := gocmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("Audit after 1: %v (-want +got)\n%s", err, diff)
	}
	if got, err := s.Audit(t.Context(), 0, 1); err != nil || len(got) != 1 || got[0].Operation != "batch:A" {
		t.Errorf("Audit limit 1: %+v, %v", got, err)
	}
	late := e("batch:D")
	late.Time = at.Add(time.Hour)
	if err := s.AppendAudit(t.Context(), []access.AuditEntry{late}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneAudit(t.Context(), at.Add(time.Minute)); err != nil || n != 3 {
		t.Errorf("PruneAudit: %d, %v; want 3 pruned", n, err)
	}
	if got, err := s.Audit(t.Context(), 0, 10); err != nil || len(got) != 1 || got[0].Operation != "batch:D" || got[0].Seq != 4 {
		t.Errorf("after pruning: %+v, %v", got, err)
	}
}

// TestKeyStore is the conformance suite every access.KeyStore passes;
// open returns a new, empty store.
func TestKeyStore(t *testing.T, open func(t *testing.T) access.KeyStore) {
	ctx := t.Context()
	t.Run("Keys", func(t *testing.T) {
		s := open(t)
		if made, err := s.KeysEverMade(ctx); err != nil || made {
			t.Errorf("KeysEverMade of a new store: %v, %v; want false", made, err)
		}
		at := time.UnixMilli(1_700_000_000_123).UTC()
		b := access.StoredKey{ID: "SKIAB", Name: "bob", SealedSecret: []byte{1, 2, 3}, Policies: []string{"team-b", "read"}, CreatedAt: at}
		a := access.StoredKey{ID: "SKIAA", Name: "alice", SealedSecret: []byte{4}, Policies: []string{}, CreatedAt: at}
		for _, k := range []access.StoredKey{b, a} {
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatalf("CreateKey %s: %v", k.Name, err)
			}
		}
		if err := s.CreateKey(ctx, access.StoredKey{ID: "SKIAC", Name: "bob", SealedSecret: []byte{5}, CreatedAt: at}); !errors.Is(err, access.ErrExists) {
			t.Errorf("CreateKey of a taken name: %v, want ErrExists", err)
		}
		if err := s.CreateKey(ctx, access.StoredKey{ID: "SKIAB", Name: "carol", SealedSecret: []byte{5}, CreatedAt: at}); !errors.Is(err, access.ErrExists) {
			t.Errorf("CreateKey of a taken ID: %v, want ErrExists", err)
		}
		got, err := s.Keys(ctx)
		if diff := gocmp.Diff([]access.StoredKey{a, b}, got, cmpopts.EquateEmpty()); err != nil || diff != "" {
			t.Errorf("Keys: %v (-want +got)\n%s", err, diff)
		}
		if err := s.SetKeyDisabled(ctx, "SKIAB", true); err != nil {
			t.Fatal(err)
		}
		if k, err := s.Key(ctx, "SKIAB"); err != nil || !k.Disabled {
			t.Errorf("Key after disabling: %+v, %v", k, err)
		}
		for _, id := range []string{"SKIAB", "SKIAA"} {
			if err := s.DeleteKey(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if made, err := s.KeysEverMade(ctx); err != nil || !made {
			t.Errorf("KeysEverMade after the last key was deleted: %v, %v; want true", made, err)
		}
		for name, err := range map[string]error{
			"Key":            second(s.Key(ctx, "SKIAB")),
			"DeleteKey":      s.DeleteKey(ctx, "SKIAB"),
			"SetKeyDisabled": s.SetKeyDisabled(ctx, "nope", true),
		} {
			if !errors.Is(err, access.ErrNotFound) {
				t.Errorf("%s of a missing key: %v, want ErrNotFound", name, err)
			}
		}
	})
	t.Run("Policies", func(t *testing.T) {
		s := open(t)
		if _, err := s.Policy(ctx, "team-a"); !errors.Is(err, access.ErrNotFound) {
			t.Errorf("Policy of a missing policy: %v", err)
		}
		for _, doc := range []string{`{"v":1}`, `{"v":2}`} {
			if err := s.PutPolicy(ctx, access.Policy{Name: "team-a", Document: []byte(doc)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutPolicy(ctx, access.Policy{Name: "admin", Document: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Policies(ctx)
		want := []access.Policy{{Name: "admin", Document: []byte(`{}`)}, {Name: "team-a", Document: []byte(`{"v":2}`)}}
		if diff := gocmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("Policies: %v (-want +got)\n%s", err, diff)
		}
	})
}

func second[T any](_ T, err error) error { return err }
