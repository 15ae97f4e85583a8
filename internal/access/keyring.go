package access

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// ServerKeySize is the size of the key that seals access keys' secrets
// (AES-256).
const ServerKeySize = 32

// Keyring issues access keys and opens their secrets. SigV4 needs the
// secret itself, not a hash of it, so the store holds each secret sealed
// with AES-GCM under the server's key, bound to its key ID; the secret is
// shown in clear once, when the key is created.
type Keyring struct {
	store   KeyStore
	aead    cipher.AEAD
	account string
	now     func() time.Time
}

// NewKeyring returns a keyring over store, sealing with serverKey
// (ServerKeySize bytes); principals are IAM users of accountID.
func NewKeyring(store KeyStore, serverKey []byte, accountID string) (*Keyring, error) {
	if len(serverKey) != ServerKeySize {
		return nil, fmt.Errorf("server key: %d bytes, want %d", len(serverKey), ServerKeySize)
	}
	block, err := aes.NewCipher(serverKey)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	return &Keyring{store: store, aead: aead, account: accountID, now: time.Now}, nil
}

// Store returns the keyring's store.
func (k *Keyring) Store() KeyStore { return k.store }

// userName and policyName are IAM's patterns for user and policy names.
var (
	userName   = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	policyName = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
)

// ValidPolicyName tells whether IAM would take name as a policy's.
func ValidPolicyName(name string) bool { return policyName.MatchString(name) }

// NewKey is a key as created: the only time its secret is shown.
type NewKey struct {
	ID, Secret, Name string
	Policies         []string
	CreatedAt        time.Time
}

// ErrInvalidKeyName is a key name IAM would not take as a user name, or a
// policy name it would not take.
var ErrInvalidKeyName = errors.New("invalid key name")

// ErrUnknownPolicy is a key asked for with a policy that is neither
// built-in nor in the store.
var ErrUnknownPolicy = errors.New("no such access policy")

// Create issues a key named name with the given policies, each of which
// must be built-in or in the store: a misspelt policy would otherwise
// give a key that may do nothing, with nothing said.
func (k *Keyring) Create(ctx context.Context, name string, policies []string) (NewKey, error) {
	if !userName.MatchString(name) {
		return NewKey{}, fmt.Errorf("%w %q: want 1 to 64 letters, digits or +=,.@_-", ErrInvalidKeyName, name)
	}
	for _, p := range policies {
		if !ValidPolicyName(p) {
			return NewKey{}, fmt.Errorf("%w: policy name %q: want 1 to 128 letters, digits or +=,.@_-", ErrInvalidKeyName, p)
		}
		if IsBuiltinPolicy(p) {
			continue
		}
		_, err := k.store.Policy(ctx, p)
		if errors.Is(err, ErrNotFound) {
			return NewKey{}, fmt.Errorf("%w %q: the built-in ones are AdministratorAccess and ReadOnlyAccess; "+
				"others are a cluster file's accessPolicies, applied with sharq apply", ErrUnknownPolicy, p)
		}
		if err != nil {
			return NewKey{}, fmt.Errorf("policy %s: %w", p, err)
		}
	}
	id := "SKIA" + randomText(10, base32.StdEncoding.WithPadding(base32.NoPadding))
	secret := randomText(30, base64.RawStdEncoding)
	// The sealed secret is the nonce followed by the ciphertext.
	n := nonce(k.aead.NonceSize())
	sealed := k.aead.Seal(n, n, []byte(secret), []byte(id))
	at := k.now().UTC().Truncate(time.Millisecond)
	err := k.store.CreateKey(ctx, StoredKey{ID: id, Name: name, Policies: policies, CreatedAt: at, SealedSecret: sealed})
	if err != nil {
		return NewKey{}, err
	}
	return NewKey{ID: id, Secret: secret, Name: name, Policies: policies, CreatedAt: at}, nil
}

// Credential returns key id's secret and identity; ErrUnknownKey when it
// does not exist or is disabled.
func (k *Keyring) Credential(ctx context.Context, id string) (Credential, error) {
	sk, err := k.store.Key(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && sk.Disabled) {
		return Credential{}, ErrUnknownKey
	}
	if err != nil {
		return Credential{}, err
	}
	n := k.aead.NonceSize()
	if len(sk.SealedSecret) < n {
		return Credential{}, fmt.Errorf("access key %s: sealed secret too short", id)
	}
	secret, err := k.aead.Open(nil, sk.SealedSecret[:n], sk.SealedSecret[n:], []byte(id))
	if err != nil {
		return Credential{}, fmt.Errorf("access key %s: open secret (is this the server key it was created with?): %w", id, err)
	}
	return Credential{Identity: k.Identity(sk), Secret: string(secret)}, nil
}

// Identity is the caller who signs with sk.
func (k *Keyring) Identity(sk StoredKey) Identity {
	return Identity{AccessKeyID: sk.ID, Principal: UserARN(k.account, sk.Name)}
}

// UserARN is the principal of the key named name.
func UserARN(accountID, name string) string {
	return "arn:aws:iam::" + accountID + ":user/" + name
}

func nonce(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func randomText(n int, enc interface{ EncodeToString([]byte) string }) string {
	b := make([]byte, n)
	rand.Read(b)
	return enc.EncodeToString(b)
}
