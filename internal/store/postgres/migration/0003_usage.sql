-- Usage history: the capacity each attempt held, of one kind (own, or
-- borrowed from peer), over [start_at, stop_at) in epoch milliseconds;
-- stop_at is 0 while the attempt holds it. Reports sum these; retention
-- deletes closed ones by stop_at.
CREATE TABLE usage (
	attempt   TEXT COLLATE "C" NOT NULL CHECK (attempt <> ''),
	seq       INTEGER NOT NULL,
	job       TEXT COLLATE "C" NOT NULL,
	queue     TEXT COLLATE "C" NOT NULL,
	share     TEXT COLLATE "C" NOT NULL,
	share_id  TEXT COLLATE "C" NOT NULL,
	owner     TEXT COLLATE "C" NOT NULL,
	kind      TEXT COLLATE "C" NOT NULL,
	peer      TEXT COLLATE "C" NOT NULL,
	instances INTEGER NOT NULL,
	gpus      INTEGER NOT NULL,
	start_at  BIGINT NOT NULL,
	stop_at   BIGINT NOT NULL,
	preempted BOOLEAN NOT NULL DEFAULT false,
	PRIMARY KEY (attempt, seq)
);
CREATE INDEX usage_by_start ON usage (start_at, attempt, seq);
CREATE INDEX usage_by_stop ON usage (stop_at) WHERE stop_at > 0;
CREATE INDEX usage_open ON usage (start_at, attempt, seq) WHERE stop_at = 0;
