// Reads prepared once per URL (services/api/query/run.ts): what is kept, and for how long
// (pure logic; the answers of reused reads are checked end to end by endpoints.test.ts and
// page-cache.test.ts, which ask the same URLs many times).
import { describe, expect, it } from 'vitest';
import { groupArgs, parseResultSpec } from '../../../services/api/query/parse.js';
import { PreparedReads, type PreparedRows, prepareRows } from '../../../services/api/query/run.js';
import { buildRegistry } from '../../../services/api/registry/index.js';

const registry = buildRegistry([]);

function prepare(url: string): PreparedRows {
  const [path = '', query = ''] = url.split('?');
  const segments = path.split('/').filter(Boolean);
  const match = registry.matcher.match(segments)!;
  const spec = parseResultSpec(groupArgs(query), match.endpoint.resource.fields, match.endpoint.collection);
  return prepareRows(registry, match.endpoint, match.args, segments, spec);
}

describe('prepared reads', () => {
  it('prepares a URL once, and each URL its own statement', () => {
    const reads = new PreparedReads();
    let made = 0;
    const get = (url: string) =>
      reads.get(url, () => {
        made++;
        return prepare(url);
      });
    const a = get('/builds?order=-buildid&limit=50');
    expect(get('/builds?order=-buildid&limit=50')).toBe(a);
    const b = get('/builds?order=-buildid&limit=20');
    expect(made).toBe(2);
    expect(b.spec.limit).toBe(20);
    expect(a.spec.limit).toBe(50);
  });

  it('drops the oldest beyond its limit, and keeps no long URL', () => {
    const reads = new PreparedReads(2, 40);
    let made = 0;
    const get = (url: string) =>
      reads.get(url, () => {
        made++;
        return prepare(url);
      });
    get('/builds?limit=1');
    get('/builds?limit=2');
    get('/builds?limit=3');
    expect(made).toBe(3);
    get('/builds?limit=3');
    get('/builds?limit=2');
    expect(made).toBe(3);
    get('/builds?limit=1');
    expect(made).toBe(4);
    const long = `/builds?limit=1&${'field=buildid&'.repeat(5)}`;
    get(long);
    get(long);
    expect(made).toBe(6);
  });

  it('keeps nothing for a URL whose preparation fails', () => {
    const reads = new PreparedReads();
    const bad = '/builds?order=nosuchfield';
    expect(() => reads.get(bad, () => prepare(bad))).toThrow();
    let made = 0;
    reads.get('/builds?limit=5', () => {
      made++;
      return prepare('/builds?limit=5');
    });
    expect(made).toBe(1);
    expect(() => reads.get(bad, () => prepare(bad))).toThrow();
  });
});
