package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

// Keys are the store's access keys and policies. Its writes are rare
// (an operator's): they go straight to the writer connection, between
// the commit loop's transactions, instead of through group commit.
type Keys struct{ s *Store }

// Keys returns the access.KeyStore kept in this database.
func (s *Store) Keys() *Keys { return &Keys{s} }

var _ access.KeyStore = (*Keys)(nil)

func (k *Keys) CreateKey(ctx context.Context, key access.StoredKey) error {
	pol, err := json.Marshal(nonNil(key.Policies))
	if err != nil {
		return err
	}
	tx, err := k.s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create access key %q: %w", key.Name, err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO access_keys (id, name, sealed_secret, policies, disabled, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, key.ID, key.Name, key.SealedSecret, string(pol), key.Disabled, key.CreatedAt.UnixMilli())
	if err == nil {
		_, err = tx.ExecContext(ctx, upsertMetaSQL, keysMadeMeta, "1")
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("create access key %q: %w", key.Name, access.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create access key %q: %w", key.Name, err)
	}
	return nil
}

// keysMadeMeta is the meta key CreateKey sets, for KeysEverMade.
const keysMadeMeta = "access_keys_made"

// KeysEverMade also counts the keys of a database from before the marker.
func (k *Keys) KeysEverMade(ctx context.Context) (bool, error) {
	var made bool
	err := k.s.readers.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM meta WHERE k = ?) OR EXISTS (SELECT 1 FROM access_keys)`,
		keysMadeMeta).Scan(&made)
	if err != nil {
		return false, fmt.Errorf("access keys: %w", err)
	}
	return made, nil
}

const keyColumns = `id, name, sealed_secret, policies, disabled, created_at`

func scanKey(row interface{ Scan(...any) error }) (access.StoredKey, error) {
	var k access.StoredKey
	var pol string
	var created int64
	if err := row.Scan(&k.ID, &k.Name, &k.SealedSecret, &pol, &k.Disabled, &created); err != nil {
		return k, err
	}
	k.CreatedAt = time.UnixMilli(created).UTC()
	if err := json.Unmarshal([]byte(pol), &k.Policies); err != nil {
		return k, fmt.Errorf("access key %s: policies: %w", k.ID, err)
	}
	return k, nil
}

func (k *Keys) Key(ctx context.Context, id string) (access.StoredKey, error) {
	key, err := scanKey(k.s.readers.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM access_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return key, fmt.Errorf("access key %q: %w", id, access.ErrNotFound)
	}
	return key, err
}

func (k *Keys) Keys(ctx context.Context) ([]access.StoredKey, error) {
	rows, err := k.s.readers.QueryContext(ctx, `SELECT `+keyColumns+` FROM access_keys ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list access keys: %w", err)
	}
	defer rows.Close()
	var out []access.StoredKey
	for rows.Next() {
		key, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, rows.Err()
}

func (k *Keys) SetKeyDisabled(ctx context.Context, id string, disabled bool) error {
	return k.changeOne(ctx, `UPDATE access_keys SET disabled = ? WHERE id = ?`, disabled, id)
}

func (k *Keys) DeleteKey(ctx context.Context, id string) error {
	return k.changeOne(ctx, `DELETE FROM access_keys WHERE id = ?`, id)
}

// changeOne runs a statement whose last argument is a key ID, and fails
// with ErrNotFound when it touched no row.
func (k *Keys) changeOne(ctx context.Context, query string, args ...any) error {
	res, err := k.s.writer.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("access key: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("access key %q: %w", args[len(args)-1], access.ErrNotFound)
	}
	return nil
}

func (k *Keys) PutPolicy(ctx context.Context, p access.Policy) error {
	_, err := k.s.writer.ExecContext(ctx, `INSERT INTO access_policies (name, document) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET document = excluded.document`, p.Name, string(p.Document))
	if err != nil {
		return fmt.Errorf("put access policy %q: %w", p.Name, err)
	}
	return nil
}

func (k *Keys) Policy(ctx context.Context, name string) (access.Policy, error) {
	p := access.Policy{Name: name}
	var doc string
	err := k.s.readers.QueryRowContext(ctx, `SELECT document FROM access_policies WHERE name = ?`, name).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("access policy %q: %w", name, access.ErrNotFound)
	}
	p.Document = []byte(doc)
	return p, err
}

func (k *Keys) Policies(ctx context.Context) ([]access.Policy, error) {
	rows, err := k.s.readers.QueryContext(ctx, `SELECT name, document FROM access_policies ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list access policies: %w", err)
	}
	defer rows.Close()
	var out []access.Policy
	for rows.Next() {
		var p access.Policy
		var doc string
		if err := rows.Scan(&p.Name, &doc); err != nil {
			return nil, err
		}
		p.Document = []byte(doc)
		out = append(out, p)
	}
	return out, rows.Err()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
