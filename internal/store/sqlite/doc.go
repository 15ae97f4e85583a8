// Package sqlite is sharq's embedded store: store.Store on one SQLite file,
// through the pure-Go driver modernc.org/sqlite, so the binary needs no cgo
// and no database server.
//
// Invariants:
//   - A Commit that returned nil is on disk: the database runs in WAL mode
//     with synchronous=FULL, so the WAL is synced at every transaction
//     commit and survives kill -9 and power loss.
//   - All writes go through one connection. Commits that arrive while a
//     transaction is being written wait and are then written together in
//     the next transaction, with one sync (group commit); a group that fails
//     is retried batch by batch, so only the bad batch fails.
//   - Reads use a separate pool of read-only connections; in WAL mode they
//     see the last committed transaction and neither block nor wait for the
//     writer. Connections read pages through a memory mapping.
//   - A background goroutine checkpoints (copies the WAL into the database
//     file) on a connection of its own, so commits only append to the WAL;
//     the writer checkpoints by itself only if the WAL grows past a backstop.
//   - The schema is the embedded migration/*.sql files, applied in name order,
//     each in its own transaction and recorded in the migrations table.
package sqlite
