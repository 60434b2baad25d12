-- How far each running build's writes have got, so that a write retried after the database
-- went away is applied once: a master that lost its connection while COMMIT was on its way
-- cannot tell whether the transaction committed, and an append, a new step or a triggered
-- build set applied twice would be a wrong log or a duplicate build. Each write of a build
-- carries its number (seq); the transaction that applies it records the number and what the
-- write answered (result), and a retry that finds its number recorded answers that instead
-- of applying the write again (services/master/claims.ts).
--
-- One row per build, written by the master that runs it; rows of builds that finished long
-- ago are deleted by the expire-masters job.
CREATE TABLE flotilla.build_writes (
  buildid integer PRIMARY KEY,
  seq integer NOT NULL,
  result jsonb
);
