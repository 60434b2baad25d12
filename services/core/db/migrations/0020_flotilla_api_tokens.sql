-- API tokens (issue 33, section 4; services/core/data/api-tokens.ts): a user's named
-- credentials for scripts, sent as `Authorization: Bearer flt_<id>_<secret>`. Only the
-- SHA-256 of the secret is kept (the secret is 32 random bytes: no slow hash is needed, see
-- services/api/auth/api-tokens.ts). `roles` are those the user chose, never more than theirs
-- at creation, and at each use also cut to the user's roles then. `user_info` is the user as
-- they were at creation: what a token of a user who logs in by OIDC acts as; a password
-- user's token acts as that user's current entry. Revoked rows stay (revoked_at set) so the
-- list says what was revoked; a live name is unique per user. Times: seconds since the epoch.
CREATE TABLE IF NOT EXISTS flotilla.api_tokens (
  id          bigserial PRIMARY KEY,
  owner       text    NOT NULL,
  name        text    NOT NULL,
  secret_hash bytea   NOT NULL,
  roles       text[]  NOT NULL,
  user_info   jsonb   NOT NULL,
  via         text    NOT NULL CHECK (via IN ('password', 'token')),
  created_at  integer NOT NULL,
  expires_at  integer NOT NULL,
  revoked_at  integer
);
CREATE INDEX IF NOT EXISTS api_tokens_owner ON flotilla.api_tokens (owner, id);
CREATE UNIQUE INDEX IF NOT EXISTS api_tokens_live_name ON flotilla.api_tokens (owner, name)
  WHERE revoked_at IS NULL;
