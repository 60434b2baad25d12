// The PB traffic recorded between a real Buildbot 3.7 master and buildbot-worker 3.7
// (test/fixtures/pb, made by its record.mjs), read for the PB layer tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BananaDecoder, type BananaItem } from '../../../../services/master/workers/pb/banana.js';

export type Side = 'master' | 'worker';

export interface Recording {
  description: string;
  chunks: { from: Side; data: Buffer }[];
}

const FIXTURES = join(import.meta.dirname, '../../../fixtures/pb');

export function recording(name: 'session' | 'login-wrong-password'): Recording {
  const raw = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as {
    description: string;
    chunks: { from: Side; data: string }[];
  };
  return {
    description: raw.description,
    chunks: raw.chunks.map((c) => ({ from: c.from, data: Buffer.from(c.data, 'base64') })),
  };
}

/** Everything one side sent, in order, as one buffer. */
export function stream(r: Recording, from: Side): Buffer {
  return Buffer.concat(r.chunks.filter((c) => c.from === from).map((c) => c.data));
}

/** The banana expressions one side sent, the dialect first (decoded with the pb vocabulary after it). */
export function expressions(r: Recording, from: Side): BananaItem[] {
  const items: BananaItem[] = [];
  const d = new BananaDecoder((i) => {
    items.push(i);
    d.vocab = true;
  });
  d.push(stream(r, from));
  return items;
}
