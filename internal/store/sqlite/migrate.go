package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"slices"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// migrate applies the embedded migrations the database has not recorded
// yet, in name order. New schema changes go in new files; applied files
// never change.
func migrate(ctx context.Context, db *sql.DB) error {
	const create = `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY) STRICT`
	if _, err := db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := migrateFile(ctx, db, name); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// migrateFile applies one migration and records it in the same
// transaction, so a crash leaves it either applied and recorded or neither.
func migrateFile(ctx context.Context, db *sql.DB, name string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	buf, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name) VALUES (?)`, name); err != nil {
		return err
	}
	return tx.Commit()
}
