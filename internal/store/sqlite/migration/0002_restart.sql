-- What a restart needs without reading every job: the live jobs, which the
-- engine loads, and the clientToken of every job, found when a retried
-- submission names it.
ALTER TABLE jobs ADD COLUMN client_token TEXT NOT NULL DEFAULT '';
UPDATE jobs SET client_token = coalesce(json_extract(CAST(doc AS TEXT), '$.sharq.clientToken'), '')
	WHERE json_valid(CAST(doc AS TEXT));
CREATE INDEX jobs_by_token ON jobs (client_token) WHERE client_token <> '';
CREATE INDEX jobs_live ON jobs (created_at, id) WHERE ended_at = 0;
