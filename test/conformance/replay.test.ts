// The differential run's answers, asked again: every request of
// test/conformance/differential/answers.jsonl, each recorded where Flotilla's answer agreed
// with a real Buildbot 3.7 on the fixture (differential/run.ts), must get the same status,
// content type, disposition and body (by digest) from the API on a fresh copy of the fixture.
// Where a case fails, run the differential against a Buildbot to see who is right.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { changedBy43, without43Fields } from './buildbot-4.3.js';
import { digestOf, type Recorded } from './differential/recorded.js';
import { fixtureApi } from './fixture-api.js';

const answers: Recorded[] = readFileSync(new URL('./differential/answers.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Recorded)
  // The root and the spec are Buildbot 4.3's now (checked by the 4.3 cases).
  .filter((r) => !changedBy43(r.path));

const base = fixtureApi();

async function ask(r: Recorded): Promise<string | null> {
  // `{self}` in a header is the origin of the server asked (each allows its own).
  const origin = new URL(base()).origin;
  const res = await fetch(`${base()}${r.path ? `/${r.path}` : ''}`, {
    method: r.method,
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, v.replace('{self}', origin)])),
    body: r.body === undefined ? undefined : Buffer.from(r.body, 'utf8'),
    redirect: 'manual',
  });
  const got = {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    disposition: res.headers.get('content-disposition'),
    text: await res.text(),
  };
  // Rows carry Buildbot 4.3's fields too, which the 3.7 answer could not have (JSON is
  // served as text/plain too, to a client that does not ask for JSON).
  if (got.text.startsWith('{')) {
    try {
      got.text = JSON.stringify(without43Fields(JSON.parse(got.text)));
    } catch {
      // Not JSON after all: compared as it came.
    }
  }
  const where = `${r.method} /${r.path}`;
  if (got.status !== r.status)
    return `${where}: status ${got.status}, recorded ${r.status}: ${got.text.slice(0, 200)}`;
  if (got.type !== r.type) return `${where}: content-type ${got.type}, recorded ${r.type}`;
  if ((got.disposition ?? undefined) !== r.disposition) return `${where}: disposition ${got.disposition}`;
  if (digestOf(r.path, got) !== r.digest) return `${where}: body differs: ${got.text.slice(0, 300)}`;
  return null;
}

it('answers every recorded request as it did when it agreed with Buildbot', async () => {
  expect(answers.length).toBeGreaterThan(5000);
  const failures: string[] = [];
  // A few at a time: the order of the answers does not matter, none of them writes.
  for (let i = 0; i < answers.length; i += 8) {
    const batch = await Promise.all(answers.slice(i, i + 8).map(ask));
    for (const f of batch) if (f) failures.push(f);
  }
  expect(failures.slice(0, 20), `${failures.length} of ${answers.length} differ`).toEqual([]);
}, 300_000);
