package access

import (
	"context"
	"errors"
	"time"
)

// ErrUnknownKey is returned for an access key that does not exist, or is
// disabled: authentication answers both the same way.
var ErrUnknownKey = errors.New("unknown access key")

// Credential is an access key as authentication needs it: the secret to
// check a signature with, and who signs with it.
type Credential struct {
	Identity Identity
	Secret   string
}

// CredentialSource finds the credential of an access key.
type CredentialSource interface {
	// Credential returns the enabled key id, ErrUnknownKey when there is
	// none, or another error when it cannot tell.
	Credential(ctx context.Context, id string) (Credential, error)
}

// StoredKey is an access key as a KeyStore keeps it: its secret sealed
// with the server's key, never in clear.
type StoredKey struct {
	ID           string // the access key ID, e.g. SKIA4X2Q...
	Name         string // unique; the principal is user/<Name>
	SealedSecret []byte
	Policies     []string // names of the access policies it has
	Disabled     bool
	CreatedAt    time.Time
}

// Policy is a named access policy as a KeyStore keeps it: its document in
// JSON (see PolicyDocument).
type Policy struct {
	Name     string
	Document []byte
}

// ErrNotFound is returned by a KeyStore for a key or policy it does not
// hold; ErrExists when a key's ID or name is taken.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// KeyStore is the durable record of access keys and policies. It is
// safe for concurrent use; writes are durable when they return.
type KeyStore interface {
	// CreateKey adds k; ErrExists if its ID or name is taken.
	CreateKey(ctx context.Context, k StoredKey) error
	// Key returns the key with ID id (enabled or not); ErrNotFound.
	Key(ctx context.Context, id string) (StoredKey, error)
	// Keys returns every key, ordered by name.
	Keys(ctx context.Context) ([]StoredKey, error)
	// SetKeyDisabled disables or enables key id; ErrNotFound.
	SetKeyDisabled(ctx context.Context, id string, disabled bool) error
	// DeleteKey removes key id; ErrNotFound.
	DeleteKey(ctx context.Context, id string) error
	// KeysEverMade tells whether a key was ever made in this store, even
	// if every key has been deleted since: --auth auto then stays signed
	// across restarts instead of opening the server by itself.
	KeysEverMade(ctx context.Context) (bool, error)
	// PutPolicy creates or replaces the policy of p's name.
	PutPolicy(ctx context.Context, p Policy) error
	// Policy returns the policy named name; ErrNotFound.
	Policy(ctx context.Context, name string) (Policy, error)
	// Policies returns every policy, ordered by name.
	Policies(ctx context.Context) ([]Policy, error)
}
