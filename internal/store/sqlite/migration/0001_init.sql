-- Configuration objects: scheduling policies, service environments, job
-- queues, quota shares. The engine loads them all on start.
CREATE TABLE resources (
	arn  TEXT PRIMARY KEY CHECK (arn <> ''),
	kind TEXT NOT NULL,
	doc  BLOB NOT NULL
) STRICT;

-- Service jobs. The columns besides doc exist for ListJobs and retention;
-- doc is the engine's whole record.
CREATE TABLE jobs (
	id         TEXT PRIMARY KEY CHECK (id <> ''),
	name       TEXT NOT NULL,
	name_lower TEXT NOT NULL,
	queue      TEXT NOT NULL,
	share      TEXT NOT NULL,
	status     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	ended_at   INTEGER NOT NULL,
	doc        BLOB NOT NULL
) STRICT;

-- Every listing orders by (created_at, id), so each index ends with them:
-- a page is then a range scan that stops after Limit rows, without a sort.
CREATE INDEX jobs_by_created ON jobs (created_at, id);
CREATE INDEX jobs_by_queue ON jobs (queue, created_at, id);
CREATE INDEX jobs_by_queue_status ON jobs (queue, status, created_at, id);
CREATE INDEX jobs_by_share ON jobs (share, created_at, id);
CREATE INDEX jobs_by_name ON jobs (name_lower, created_at, id);
-- Only ended jobs are candidates for PurgeEnded.
CREATE INDEX jobs_by_ended ON jobs (ended_at) WHERE ended_at > 0;

-- Small named values the engine keeps (counters, versions).
CREATE TABLE meta (
	k TEXT PRIMARY KEY CHECK (k <> ''),
	v TEXT NOT NULL
) STRICT;
