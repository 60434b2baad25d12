-- The audit log of control actions (issue 33, section 4; services/core/data/audit.ts): who
-- asked, from where, when, what (the JSON-RPC method, the path and its arguments, secrets
-- left out) and the answer ('success' or the error's stable code, with its HTTP status).
-- Refused and invalid calls are rows too. Rows are only added, and deleted by the retention
-- job past retention.audit_horizon (by `at`, hence the index). Times are seconds since the
-- epoch, as in Buildbot's tables.
CREATE TABLE IF NOT EXISTS flotilla.audit_log (
  id      bigserial PRIMARY KEY,
  at      integer NOT NULL,
  actor   text    NOT NULL,
  address text,
  method  text,
  path    text    NOT NULL,
  args    jsonb   NOT NULL DEFAULT '{}'::jsonb,
  outcome text    NOT NULL,
  status  integer NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_at ON flotilla.audit_log (at, id);
