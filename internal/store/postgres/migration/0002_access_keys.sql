-- Access keys and the access policies they are given. A key's secret is
-- kept sealed with the server's key (nonce, then AES-GCM ciphertext); its
-- policies are a JSON array of policy names.
CREATE TABLE access_keys (
	id            TEXT COLLATE "C" PRIMARY KEY,
	name          TEXT COLLATE "C" NOT NULL UNIQUE,
	sealed_secret BYTEA NOT NULL,
	policies      TEXT NOT NULL DEFAULT '[]',
	disabled      BOOLEAN NOT NULL DEFAULT false,
	created_at    BIGINT NOT NULL -- Unix milliseconds
);

CREATE TABLE access_policies (
	name     TEXT COLLATE "C" PRIMARY KEY,
	document TEXT NOT NULL -- JSON
);

-- The audit log: every mutating call, allowed or denied, as the JSON line
-- it is read as (access.AuditEntry without its seq), and its time for
-- pruning.
CREATE TABLE audit_log (
	seq   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at    BIGINT NOT NULL, -- Unix milliseconds
	entry TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);
