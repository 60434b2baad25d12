// What a release cannot do without, refused by helm template (and so by install and
// upgrade) with a message that says what to set.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, template } from './lib/helm.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const minimal = CI_VALUES[0]!;

describe('required values', () => {
  it('renders with just the database and Redis URLs', () => {
    expect(template([minimal]).status).toBe(0);
  });

  it('needs the database: PostgreSQL is external, nothing to default to', () => {
    const r = template([{ redis: { url: 'redis://redis:6379' } }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('database.url or database.existingSecret is required');
  });

  it('needs Redis', () => {
    const r = template([{ database: { url: 'postgresql://u:p@db/flotilla' } }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('redis.url or redis.existingSecret is required');
  });

  it('accepts an existing Secret instead of a URL', () => {
    const r = template([{ database: { existingSecret: 'db' }, redis: { existingSecret: 'redis' } }]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('needs a certificate Secret for TLS', () => {
    const r = template([
      minimal,
      { ingress: { enabled: true, host: 'ci.example.com', tls: { enabled: true } } },
    ]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('ingress.tls.secretName is required');
  });

  it('refuses worker names longer than Buildbot allows', () => {
    const r = template([minimal, { nameOverride: 'n'.repeat(40) }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/worker name ".*-worker-0" is longer than the 50 characters/);
  });
});
