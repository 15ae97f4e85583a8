package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sharq-dev/sharq/internal/access"
)

// Keys are the database's access keys, access policies and audit log,
// which every server on it shares. Their writes are rare (an operator's,
// or the audit log's batches): they go straight to the database, outside
// the leader's commits, so a follower's key changes need no leader.
type Keys struct{ s *Store }

// Keys returns the access.KeyStore and access.AuditStore kept in this
// database.
func (s *Store) Keys() *Keys { return &Keys{s} }

var (
	_ access.KeyStore   = (*Keys)(nil)
	_ access.AuditStore = (*Keys)(nil)
)

func (k *Keys) CreateKey(ctx context.Context, key access.StoredKey) error {
	pol, err := json.Marshal(nonNil(key.Policies))
	if err != nil {
		return err
	}
	// The marker is written with the key, outside the leader's fenced
	// commits: the engine never writes this meta key.
	err = pgx.BeginFunc(ctx, k.s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO access_keys (id, name, sealed_secret, policies, disabled, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, key.ID, key.Name, key.SealedSecret, string(pol), key.Disabled, key.CreatedAt.UnixMilli())
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO meta (k, v) VALUES ($1, '1') ON CONFLICT (k) DO NOTHING`, keysMadeMeta)
		return err
	})
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
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
	err := k.s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM meta WHERE k = $1) OR EXISTS (SELECT 1 FROM access_keys)`,
		keysMadeMeta).Scan(&made)
	if err != nil {
		return false, fmt.Errorf("access keys: %w", err)
	}
	return made, nil
}

const keyColumns = `id, name, sealed_secret, policies, disabled, created_at`

func scanKey(row pgx.Row) (access.StoredKey, error) {
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
	key, err := scanKey(k.s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM access_keys WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return key, fmt.Errorf("access key %q: %w", id, access.ErrNotFound)
	}
	return key, err
}

func (k *Keys) Keys(ctx context.Context) ([]access.StoredKey, error) {
	rows, err := k.s.pool.Query(ctx, `SELECT `+keyColumns+` FROM access_keys ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list access keys: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.StoredKey, error) { return scanKey(row) })
}

func (k *Keys) SetKeyDisabled(ctx context.Context, id string, disabled bool) error {
	return k.changeOne(ctx, id, `UPDATE access_keys SET disabled = $2 WHERE id = $1`, id, disabled)
}

func (k *Keys) DeleteKey(ctx context.Context, id string) error {
	return k.changeOne(ctx, id, `DELETE FROM access_keys WHERE id = $1`, id)
}

// changeOne runs a statement on key id, and fails with ErrNotFound when it
// touched no row.
func (k *Keys) changeOne(ctx context.Context, id, query string, args ...any) error {
	tag, err := k.s.pool.Exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("access key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("access key %q: %w", id, access.ErrNotFound)
	}
	return nil
}

func (k *Keys) PutPolicy(ctx context.Context, p access.Policy) error {
	_, err := k.s.pool.Exec(ctx, `INSERT INTO access_policies (name, document) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET document = excluded.document`, p.Name, string(p.Document))
	if err != nil {
		return fmt.Errorf("put access policy %q: %w", p.Name, err)
	}
	return nil
}

func (k *Keys) Policy(ctx context.Context, name string) (access.Policy, error) {
	p := access.Policy{Name: name}
	var doc string
	err := k.s.pool.QueryRow(ctx, `SELECT document FROM access_policies WHERE name = $1`, name).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("access policy %q: %w", name, access.ErrNotFound)
	}
	p.Document = []byte(doc)
	return p, err
}

func (k *Keys) Policies(ctx context.Context) ([]access.Policy, error) {
	rows, err := k.s.pool.Query(ctx, `SELECT name, document FROM access_policies ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list access policies: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.Policy, error) {
		var p access.Policy
		var doc string
		err := row.Scan(&p.Name, &doc)
		p.Document = []byte(doc)
		return p, err
	})
}

// AppendAudit writes entries in one transaction.
func (k *Keys) AppendAudit(ctx context.Context, entries []access.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, e := range entries {
		e.Seq = 0
		doc, err := e.AppendJSON(nil)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO audit_log (at, entry) VALUES ($1, $2)`, e.Time.UnixMilli(), string(doc))
	}
	err := pgx.BeginFunc(ctx, k.s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, &b).Close() })
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return nil
}

// Audit reads entries after seq after, oldest first.
func (k *Keys) Audit(ctx context.Context, after int64, limit int) ([]access.AuditEntry, error) {
	rows, err := k.s.pool.Query(ctx, `SELECT seq, entry FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.AuditEntry, error) {
		var seq int64
		var doc string
		var e access.AuditEntry
		if err := row.Scan(&seq, &doc); err != nil {
			return e, err
		}
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return e, fmt.Errorf("audit entry %d: %w", seq, err)
		}
		e.Seq = seq
		return e, nil
	})
}

// PruneAudit deletes the entries older than before.
func (k *Keys) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	tag, err := k.s.pool.Exec(ctx, `DELETE FROM audit_log WHERE at < $1`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return tag.RowsAffected(), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
