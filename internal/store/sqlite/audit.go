package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
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
	// Rows go in by the statement of auditRows, each statement's cost
	// (its call through database/sql and the driver, the AUTOINCREMENT
	// counter's read and write) shared by its rows. The statements do not
	// watch ctx, for which the driver starts a goroutine per call: the
	// transaction does.
	exec := context.WithoutCancel(ctx)
	var st *sql.Stmt
	args := make([]any, 0, 2*auditRows)
	var doc []byte
	for lo := 0; lo < len(entries); lo += auditRows {
		chunk := entries[lo:min(lo+auditRows, len(entries))]
		if st == nil || len(chunk) < auditRows { // the first chunk, and a shorter last one
			q := `INSERT INTO audit_log (at, entry) VALUES (?, ?)` + strings.Repeat(`, (?, ?)`, len(chunk)-1)
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return fmt.Errorf("append audit: %w", err)
			}
			defer st.Close()
		}
		args = args[:0]
		for _, e := range chunk {
			e.Seq = 0
			if doc, err = e.AppendJSON(doc[:0]); err != nil {
				return err
			}
			args = append(args, e.Time.UnixMilli(), string(doc))
		}
		if _, err := st.ExecContext(exec, args...); err != nil {
			return fmt.Errorf("append audit: %w", err)
		}
	}
	return tx.Commit()
}

// auditRows is how many audit entries one INSERT writes.
const auditRows = 64

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
