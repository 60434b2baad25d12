// The audit log (Flotilla's, not Buildbot's: services/core/data/audit.ts): every control
// action with who asked, from where, when, what and the answer, newest last by id. Read by
// administrators only (services/api/auth/authorizer.ts, core/auth/authz.ts's decideAdmin),
// with Buildbot's query parameters (filter, order, limit, offset); one entry is
// `?auditid=N`. Unlisted:
// /application.spec stays Buildbot's. Rows are few and read rarely: no kept totals, and no
// write-version trigger, so no answer of it is ever kept by the page cache.
import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';

/** The first segment of the audit log's paths (authorization decides by it). */
export const AUDIT_ROOT = 'audit';

export const auditEntry: Resource = {
  name: 'audit',
  plural: 'audit',
  key: 'auditid',
  from: sql`flotilla.audit_log a`,
  fields: [
    field('auditid', t.integer, sql`a.id`),
    field('at', t.datetime, sql`a.at`),
    field('actor', t.string, sql`a.actor`),
    field('address', t.string, sql`a.address`, { nullable: true }),
    field('method', t.string, sql`a.method`, { nullable: true }),
    field('path', t.string, sql`a.path`),
    field('args', t.jsonobject, sql`a.args`),
    // 'success', or the stable code of the error answered (docs/compatibility.md).
    field('outcome', t.string, sql`a.outcome`),
    field('status', t.integer, sql`a.status`),
    // The API token the action came with (services/api/auth/api-tokens.ts); null: none.
    field('tokenid', t.integer, sql`a.tokenid`, { nullable: true }),
  ],
};

export const auditEndpoints: Endpoint[] = [
  {
    pattern: AUDIT_ROOT,
    resource: auditEntry,
    collection: true,
    kind: 'rows',
    unlisted: true,
    scope: () => [],
  },
];
