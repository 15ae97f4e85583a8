// Package postgres is store.Store on PostgreSQL (through pgx), for a
// control plane of several sharq servers sharing one database: one of them
// holds the leadership lease and writes, and every write it makes carries
// the lease's term, which the database checks (fencing), so a server that
// lost the lease can never commit again.
//
// It keeps the embedded store's contract and shape: versioned migrations
// applied at Open, one write loop that commits everything queued in one
// transaction (group commit), listings that walk an index, and a restart
// that reads only the live jobs.
package postgres
