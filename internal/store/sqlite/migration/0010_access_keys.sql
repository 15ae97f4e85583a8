-- Access keys and the access policies they are given. A key's secret is
-- kept sealed with the server's key (nonce, then AES-GCM ciphertext); its
-- policies are a JSON array of policy names.
CREATE TABLE access_keys (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	sealed_secret BLOB NOT NULL,
	policies TEXT NOT NULL DEFAULT '[]',
	disabled INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL -- Unix milliseconds
) STRICT;

CREATE TABLE access_policies (
	name TEXT PRIMARY KEY,
	document TEXT NOT NULL -- JSON
) STRICT;

-- The audit log: every mutating call, allowed or denied, as the JSON line
-- it is read as (access.AuditEntry without its seq), and its time for
-- pruning.
CREATE TABLE audit_log (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	at INTEGER NOT NULL, -- Unix milliseconds
	entry TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);
