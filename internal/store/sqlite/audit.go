package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

var _ access.AuditStore = (*Keys)(nil)

// AppendAudit writes entries in one transaction.
func (k *Keys) AppendAudit(ctx context.Context, entries []access.AuditEntry) error {
	tx, err := k.s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	defer tx.Rollback()
	// Prepared once for the batch: the driver would otherwise parse the
	// statement again for every entry, which cost more than the insert.
	st, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (at, entry) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	defer st.Close()
	for _, e := range entries {
		e.Seq = 0
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, e.Time.UnixMilli(), string(b)); err != nil {
			return fmt.Errorf("append audit: %w", err)
		}
	}
	return tx.Commit()
}

// Audit reads entries after seq after, oldest first.
func (k *Keys) Audit(ctx context.Context, after int64, limit int) ([]access.AuditEntry, error) {
	rows, err := k.s.readers.QueryContext(ctx, `SELECT seq, entry FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	defer rows.Close()
	var out []access.AuditEntry
	for rows.Next() {
		var seq int64
		var doc string
		if err := rows.Scan(&seq, &doc); err != nil {
			return nil, err
		}
		var e access.AuditEntry
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return nil, fmt.Errorf("audit entry %d: %w", seq, err)
		}
		e.Seq = seq
		out = append(out, e)
	}
	return out, rows.Err()
}

// PruneAudit deletes the entries older than before.
func (k *Keys) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	res, err := k.s.writer.ExecContext(ctx, `DELETE FROM audit_log WHERE at < ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return res.RowsAffected()
}
