-- Text that is compared or ordered uses the "C" collation: byte order, as
-- the embedded store orders, whatever the database's locale.

-- Configuration objects: scheduling policies, service environments, job
-- queues, quota shares. The engine loads them all on start.
CREATE TABLE resources (
	arn  TEXT COLLATE "C" PRIMARY KEY CHECK (arn <> ''),
	kind TEXT NOT NULL,
	doc  BYTEA NOT NULL
);

-- Service jobs. The columns besides doc serve listing, retention and
-- restart; doc is the engine's whole record.
CREATE TABLE jobs (
	id           TEXT COLLATE "C" PRIMARY KEY CHECK (id <> ''),
	name         TEXT NOT NULL,
	name_lower   TEXT COLLATE "C" NOT NULL,
	queue        TEXT COLLATE "C" NOT NULL,
	share        TEXT COLLATE "C" NOT NULL,
	status       TEXT COLLATE "C" NOT NULL,
	created_at   BIGINT NOT NULL,
	ended_at     BIGINT NOT NULL,
	client_token TEXT COLLATE "C" NOT NULL,
	doc          BYTEA NOT NULL
);

-- Every listing orders by (created_at, id), so each index ends with them:
-- a page is then a range scan that stops after Limit rows, without a sort.
CREATE INDEX jobs_by_created ON jobs (created_at, id);
CREATE INDEX jobs_by_queue ON jobs (queue, created_at, id);
CREATE INDEX jobs_by_queue_status ON jobs (queue, status, created_at, id);
CREATE INDEX jobs_by_share ON jobs (share, created_at, id);
CREATE INDEX jobs_by_name ON jobs (name_lower, created_at, id);
CREATE INDEX jobs_by_ended ON jobs (ended_at) WHERE ended_at > 0;
-- What a restart reads: the live jobs, and the ended jobs' clientTokens.
CREATE INDEX jobs_ended_tokens ON jobs (ended_at, client_token, id) WHERE client_token <> '' AND ended_at > 0;
CREATE INDEX jobs_live ON jobs (created_at, id) WHERE ended_at = 0;

-- Small named values the engine keeps (counters, versions).
CREATE TABLE meta (
	k TEXT COLLATE "C" PRIMARY KEY CHECK (k <> ''),
	v TEXT NOT NULL
);

-- The leadership lease: one row. term grows by one each time a server
-- takes the lease over; every write of the leader checks it (fencing).
CREATE TABLE leader (
	id         INT PRIMARY KEY CHECK (id = 1),
	term       BIGINT NOT NULL,
	holder     TEXT NOT NULL,
	address    TEXT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO leader (id, term, holder, address, expires_at) VALUES (1, 0, '', '', '-infinity');
