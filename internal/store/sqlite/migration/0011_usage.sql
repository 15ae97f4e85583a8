-- Usage history: the capacity each attempt held, of one kind (own, or
-- borrowed from peer), over [start_at, stop_at) in epoch milliseconds;
-- stop_at is 0 while the attempt holds it. Reports sum these; retention
-- deletes closed ones by stop_at.
CREATE TABLE usage (
	attempt   TEXT NOT NULL CHECK (attempt <> ''),
	seq       INTEGER NOT NULL,
	job       TEXT NOT NULL,
	queue     TEXT NOT NULL,
	share     TEXT NOT NULL,
	share_id  TEXT NOT NULL,
	owner     TEXT NOT NULL,
	kind      TEXT NOT NULL,
	peer      TEXT NOT NULL,
	instances INTEGER NOT NULL,
	gpus      INTEGER NOT NULL,
	start_at  INTEGER NOT NULL,
	stop_at   INTEGER NOT NULL,
	preempted INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (attempt, seq)
) STRICT;
CREATE INDEX usage_by_start ON usage (start_at, attempt, seq);
CREATE INDEX usage_by_stop ON usage (stop_at) WHERE stop_at > 0;
CREATE INDEX usage_open ON usage (start_at, attempt, seq) WHERE stop_at = 0;
