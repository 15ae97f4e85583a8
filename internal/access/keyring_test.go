package access_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

// Ensure a key's secret is kept sealed, opens only with the server key it
// was sealed with, a key is refused a policy that does not exist, and a
// disabled key is unknown.
func TestKeyring(t *testing.T) {
	ctx := t.Context()
	store := &accesstest.Keys{}
	serverKey := bytes.Repeat([]byte{7}, access.ServerKeySize)
	ring, err := access.NewKeyring(store, serverKey, "123456789012")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ring.Create(ctx, "team-a", []string{"ReadOnlyAccess", "team-a"})
	if !errors.Is(err, access.ErrUnknownPolicy) || !strings.Contains(err.Error(), `"team-a"`) {
		t.Errorf("a key with a policy that does not exist: %v, want ErrUnknownPolicy naming team-a", err)
	}
	if ks, _ := store.Keys(ctx); len(ks) != 0 {
		t.Errorf("keys after the refused creation: %+v", ks)
	}
	store.PutPolicy(ctx, access.Policy{Name: "team-a", Document: []byte(`{"Statement":[]}`)})
	k, err := ring.Create(ctx, "team-a", []string{"ReadOnlyAccess", "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.Key(ctx, k.ID)
	if err != nil || bytes.Contains(stored.SealedSecret, []byte(k.Secret)) || len(k.Secret) < 40 {
		t.Fatalf("stored %+v (%v) for secret %q", stored, err, k.Secret)
	}
	cred, err := ring.Credential(ctx, k.ID)
	want := access.Identity{AccessKeyID: k.ID, Principal: "arn:aws:iam::123456789012:user/team-a"}
	if err != nil || cred.Secret != k.Secret || cred.Identity != want {
		t.Errorf("Credential: %+v, %v", cred, err)
	}
	other, _ := access.NewKeyring(store, bytes.Repeat([]byte{8}, access.ServerKeySize), "123456789012")
	if _, err := other.Credential(ctx, k.ID); err == nil || errors.Is(err, access.ErrUnknownKey) {
		t.Errorf("opened with another server key: %v", err)
	}
	if _, err := ring.Create(ctx, "team-a", nil); !errors.Is(err, access.ErrExists) {
		t.Errorf("a second key of the same name: %v", err)
	}
	if _, err := ring.Create(ctx, "no spaces", nil); err == nil {
		t.Error("a name with a space was taken")
	}
	store.SetKeyDisabled(ctx, k.ID, true)
	if _, err := ring.Credential(ctx, k.ID); !errors.Is(err, access.ErrUnknownKey) {
		t.Errorf("disabled key: %v, want ErrUnknownKey", err)
	}
	if _, err := ring.Credential(ctx, "SKIANONE"); !errors.Is(err, access.ErrUnknownKey) {
		t.Errorf("missing key: %v, want ErrUnknownKey", err)
	}
}
