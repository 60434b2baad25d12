-- Buildbot's master and worker locks, held cluster-wide (services/core/data/locks.ts says how
-- they are taken; services/master/build/locks.ts when).
--
-- A lock instance is (lock_name, worker_name): a master lock has one, worker_name ''; a
-- worker lock has one per worker. lock_holders has a row per holder (a build or a step) of an
-- instance; lock_waiters a row per holder waiting for one, in arrival order (seq), which is
-- Buildbot's FIFO: a counting waiter behind an exclusive one waits its turn.
--
-- Each row names the master of its build: when that master is expired (it stopped
-- heart-beating) the housekeeping deletes its rows, and until then a master that is not
-- active never counts as a holder or a waiter.
CREATE TABLE IF NOT EXISTS flotilla.lock_holders (
  id bigserial PRIMARY KEY,
  lock_name text NOT NULL,
  worker_name text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('counting', 'exclusive')),
  count integer NOT NULL CHECK (count >= 0),
  masterid integer NOT NULL,
  -- Who holds it, for people reading the table: `build 12`, `step 345`.
  holder text NOT NULL,
  acquired_at integer NOT NULL
);
CREATE INDEX IF NOT EXISTS lock_holders_instance ON flotilla.lock_holders (lock_name, worker_name);
CREATE INDEX IF NOT EXISTS lock_holders_master ON flotilla.lock_holders (masterid);

CREATE TABLE IF NOT EXISTS flotilla.lock_waiters (
  seq bigserial PRIMARY KEY,
  lock_name text NOT NULL,
  worker_name text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('counting', 'exclusive')),
  count integer NOT NULL CHECK (count >= 0),
  masterid integer NOT NULL,
  holder text NOT NULL,
  queued_at integer NOT NULL
);
CREATE INDEX IF NOT EXISTS lock_waiters_instance ON flotilla.lock_waiters (lock_name, worker_name, seq);
CREATE INDEX IF NOT EXISTS lock_waiters_master ON flotilla.lock_waiters (masterid);
