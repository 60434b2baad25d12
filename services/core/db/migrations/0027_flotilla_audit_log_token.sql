-- Which API token an audited action came with (issue 33, section 4; migration 0020): the
-- actor says which user, this which of their scripts. Null for a login session's actions
-- (and for every row written before). No foreign key: the audit row outlives the token's.
ALTER TABLE flotilla.audit_log ADD COLUMN IF NOT EXISTS tokenid bigint;
