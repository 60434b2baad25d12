-- The background jobs that have had their effect (services/core/data/job-runs.ts).
--
-- BullMQ delivers a job at least once: a job whose completion Redis loses (a Sentinel
-- failover to a replica that had not received it, a worker whose lock lapsed) is delivered
-- again. A job's processor inserts its row here in the same transaction as its effect, so
-- the second delivery finds the row and does nothing: the effect happens once per job id,
-- whatever Redis forgets. A delivery whose transaction rolls back leaves no row, and its
-- retry runs in full. Rows are forgotten after a day (expire-masters' housekeeping); Redis
-- keeps a job's id for at most a week, and a redelivery comes minutes after the first run,
-- not days.
CREATE TABLE IF NOT EXISTS flotilla.job_runs (
  queue  text        NOT NULL,
  job_id text        NOT NULL,
  ran_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (queue, job_id)
);
CREATE INDEX IF NOT EXISTS job_runs_ran_at ON flotilla.job_runs (ran_at);
