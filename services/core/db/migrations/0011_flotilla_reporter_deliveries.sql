-- What each reporter has delivered for each build request (services/core/data/reporter-deliveries.ts).
--
-- A reporter's reports about one request (pending, started, finished; again for a retried
-- build) are BullMQ jobs that any master may run, retried with backoff: without this row a
-- "started" job retried after the "finished" one succeeded would set a forge's commit status
-- back to pending. `position` orders a request's events (the build id, then the event), and
-- only an event after the one delivered is sent. The lease makes a request's deliveries one
-- at a time across masters; a holder that dies loses it when it expires.
CREATE TABLE IF NOT EXISTS flotilla.reporter_deliveries (
  reporter       text    NOT NULL,
  buildrequestid integer NOT NULL,
  -- The latest event delivered (0: none yet).
  position       bigint  NOT NULL DEFAULT 0,
  -- Who is delivering now, and until when the lease holds.
  holder         text,
  leased_until   timestamptz,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (reporter, buildrequestid)
);
