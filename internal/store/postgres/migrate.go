package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// migrationLock is the advisory lock that keeps servers starting together
// from applying the same migration twice.
const migrationLock = 0x73686172 // "shar"

// Migrate applies the embedded migrations the database has not recorded
// yet, in name order, each in its own transaction with its record. New
// schema changes go in new files; applied files never change.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	const create = `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY)`
	if _, err := pool.Exec(ctx, create); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := migrateFile(ctx, pool, name); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

func migrateFile(ctx context.Context, pool *pgxpool.Pool, name string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM migrations WHERE name = $1`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		buf, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(buf)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO migrations (name) VALUES ($1)`, name)
		return err
	})
}
