-- What a restart needs without reading every job: the live jobs, which the
-- engine loads, and the clientTokens of the ended ones, which it keeps to
-- answer a retried submission. Both indexes grow at their right-hand edge
-- (jobs are created, and end, in time order), so they cost submissions
-- little; an index by token alone would take each new token at a random
-- place.
ALTER TABLE jobs ADD COLUMN client_token TEXT NOT NULL DEFAULT '';
UPDATE jobs SET client_token = coalesce(json_extract(CAST(doc AS TEXT), '$.sharq.clientToken'), '')
	WHERE json_valid(CAST(doc AS TEXT));
CREATE INDEX jobs_ended_tokens ON jobs (ended_at, client_token, id) WHERE client_token <> '' AND ended_at > 0;
CREATE INDEX jobs_live ON jobs (created_at, id) WHERE ended_at = 0;
