// The golden cases' comparer (golden/compare.ts) finds each kind of difference and forgives
// only what the cases' rules forgive. Pure logic: answers are built here, from the recorded
// cases themselves, so that a comparer that passed everything would fail this file.
import { describe, expect, it } from 'vitest';
import { type GoldenCase, goldenCases } from '../helpers/buildbot-recorded.js';
import { differenceOf } from './golden/compare.js';

const cases = goldenCases();
const byId = (id: string): GoldenCase => {
  const c = cases.find((x) => x.id === id);
  if (!c) throw new Error(`no golden case ${id}`);
  return c;
};

/** The answer the case expects, with its body replaced by `body` (JSON) when given. */
function answer(c: GoldenCase, change: { body?: unknown; status?: number; type?: string } = {}) {
  const body = 'body' in change ? change.body : c.expect.body;
  return {
    status: change.status ?? c.expect.status,
    headers: new Headers({
      'content-type': change.type ?? `${c.expect.contentType}; charset=utf-8`,
      ...c.expect.headers,
    }),
    text: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

const clone = <T>(v: T): T => structuredClone(v);
type Envelope = Record<string, Record<string, unknown>[]>;

describe('the golden cases comparer', () => {
  it("passes every case's own expectation, and fails each one answered with another status", () => {
    expect(cases).toHaveLength(268);
    for (const c of cases) {
      expect(differenceOf(c, answer(c)), c.id).toBeNull();
      expect(differenceOf(c, answer(c, { status: 599 })), c.id).toMatch(/^status: expected \d+, got 599/);
    }
  });

  it('compares the media type alone, and the headers a case names exactly', () => {
    const raw = byId('raw/get-logs_5_raw');
    expect(differenceOf(raw, answer(raw, { type: 'Text/Plain' }))).toBeNull();
    expect(differenceOf(raw, answer(raw, { type: 'text/html; charset=utf-8' }))).toBe(
      'content-type: expected text/plain, got text/html',
    );
    const a = answer(raw);
    a.headers.set('content-disposition', 'attachment; filename="stdio"');
    expect(differenceOf(raw, a)).toMatch(/^header content-disposition: expected/);
  });

  it('says where a text body parts from the recorded one', () => {
    const raw = byId('raw/get-logs_5_raw');
    const text = raw.expect.body as string;
    const changed = `${text.slice(0, 40)}X${text.slice(41)}`;
    expect(differenceOf(raw, answer(raw, { body: changed }))).toMatch(
      /^body text differs at char 40 \(line 1;/,
    );
  });

  it('keeps list order in an exact case, and names the field that differs', () => {
    const c = byId('builds/get-builds_order=buildid_limit=5');
    const body = clone(c.expect.body) as Envelope;
    body.builds!.reverse();
    expect(differenceOf(c, answer(c, { body }))).toMatch(/^body\.builds\[0\]\.builderid: expected 1, got 4/);
    const wrong = clone(c.expect.body) as Envelope;
    wrong.builds![2]!.state_string = 'other';
    expect(differenceOf(c, answer(c, { body: wrong }))).toMatch(
      /^body\.builds\[2\]\.state_string: expected /,
    );
    const extra = clone(c.expect.body) as Envelope;
    extra.builds![0]!.surprise = 1;
    expect(differenceOf(c, answer(c, { body: extra }))).toBe('body.builds[0]: unexpected key "surprise"');
  });

  it("takes an unordered case's list as a multiset, and a workers' masters and builders wherever they are", () => {
    const c = byId('workers/get-workers');
    expect(c.compare).toBe('unordered');
    const body = clone(c.expect.body) as Envelope;
    body.workers!.reverse();
    for (const w of body.workers!) (w.configured_on as unknown[]).reverse();
    expect(differenceOf(c, answer(c, { body }))).toBeNull();
    const changed = clone(body);
    changed.workers![0]!.paused = true;
    expect(differenceOf(c, answer(c, { body: changed }))).toMatch(
      /^body\.workers: no match for expected item .*nearest: body\.workers\[\?\]\.paused: expected false, got true$/,
    );
    const more = clone(body);
    more.workers!.push(clone(more.workers![0]!));
    expect(differenceOf(c, answer(c, { body: more }))).toMatch(/^body\.workers: 1 unexpected item\(s\)/);
  });

  it('compares no heartbeat, but wants it there', () => {
    const c = byId('masters/get-masters');
    const body = clone(c.expect.body) as Envelope;
    body.masters![0]!.last_active = 1;
    expect(differenceOf(c, answer(c, { body }))).toBeNull();
    delete body.masters![0]!.last_active;
    expect(differenceOf(c, answer(c, { body }))).toMatch(/missing key "last_active"/);
  });

  it("compares an ignored path's JSON type only", () => {
    const c = byId('jsonrpc/parse-error');
    const body = clone(c.expect.body) as { error: { message: unknown } };
    body.error.message = 'another parser says it otherwise';
    expect(differenceOf(c, answer(c, { body }))).toBeNull();
    body.error.message = 7;
    expect(differenceOf(c, answer(c, { body }))).toBe('body.error.message: expected a string, got 7');
  });

  it('compares a shape case by JSON types, keys and lengths only', () => {
    const c = byId('errors/get-builds_limit=-1');
    expect(c.compare).toBe('shape');
    expect(differenceOf(c, answer(c, { body: { error: 'limit must be a positive integer' } }))).toBeNull();
    expect(differenceOf(c, answer(c, { body: { error: 1 } }))).toBe('body.error: expected a string, got 1');
    expect(differenceOf(c, answer(c, { body: { message: '' } }))).toBe(
      'body: expected keys ["error"], got ["message"]',
    );
    expect(differenceOf(c, answer(c, { body: 'not json' }))).toBe('body: expected JSON, got "not json"');
  });
});
