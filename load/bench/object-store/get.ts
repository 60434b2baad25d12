// One hop of a first range read, alone: N signed ranged GETs of SIZE bytes (10 KiB; a raw
// download's are 4 MiB), one at a time, from the
// bench's S3 server in its own process, sent by fetch (what client.ts used first) and by the
// client's transport (services/core/objstore/transport.ts), alternating ROUNDS times so that
// both see the same load. Prints ms a GET of each, the client's CPU ms a GET, and the load
// average.
//
//   node --import tsx load/bench/object-store/get.ts        (N=2000 ROUNDS=3 SIZE=10240)
import { loadavg } from 'node:os';
import { ObjectStore } from '../../../services/core/objstore/client.js';
import {
  amzDateOf,
  authorization,
  canonicalPath,
  EMPTY_SHA256,
} from '../../../services/core/objstore/sigv4.js';
import { start } from '../../../test/helpers/processes.js';
import { TEST_S3_CREDENTIALS } from '../../../test/helpers/s3-server.js';
import { waitFor } from '../../../test/helpers/wait.js';

const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SIZE = Number(process.env.SIZE ?? 10_240);
const s3 = start(process.execPath, ['--import', 'tsx', 'load/bench/object-store/s3.ts'], {});
try {
  await waitFor('the S3 server', () => s3.output().includes('http://'), { proc: s3 });
  const endpoint = s3.output().trim().split('\n')[0]!;
  const settings = { endpoint, bucket: 'bench', region: 'us-east-1', prefix: '', pathStyle: true };
  const store = new ObjectStore({ ...settings, credentials: TEST_S3_CREDENTIALS });
  await store.put('k', new Uint8Array(SIZE + 100_000).fill(7));
  const range = (i: number) => `bytes=${(i * 10) % 100_000}-${((i * 10) % 100_000) + SIZE - 1}`;
  // The request client.ts sent through fetch before transport.ts: the same signature.
  const byFetch = async (i: number) => {
    const url = new URL(`${endpoint}${canonicalPath('/bench/k')}`);
    const headers = {
      range: range(i),
      host: url.host,
      'x-amz-date': amzDateOf(new Date()),
      'x-amz-content-sha256': EMPTY_SHA256,
    };
    const input = {
      method: 'GET',
      path: '/bench/k',
      headers,
      payloadHash: EMPTY_SHA256,
      region: 'us-east-1',
      amzDate: headers['x-amz-date'],
    };
    const { host: _host, ...sent } = headers;
    const res = await fetch(url, {
      headers: { ...sent, authorization: authorization(input, TEST_S3_CREDENTIALS) },
    });
    if (res.status !== 206) throw new Error(`fetch: ${res.status}`);
    await res.arrayBuffer();
  };
  const byTransport = async (i: number) => {
    const [, a, b] = /(\d+)-(\d+)/.exec(range(i))!.map(Number);
    await store.get('k', { start: a!, end: b! });
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, get] of [
      ['fetch', byFetch],
      ['transport', byTransport],
    ] as const) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      for (let i = 0; i < N; i++) await get(i);
      const ms = (performance.now() - t) / N;
      // The client's own CPU a GET (signing, sending, reading the answer): steadier than the
      // time on a loaded machine.
      const { user, system } = process.cpuUsage(cpu);
      const at = (x: number) => Math.round(x * 1000) / 1000;
      const cpuMsPerGet = at((user + system) / 1000 / N);
      console.log(JSON.stringify({ round, name, msPerGet: at(ms), cpuMsPerGet, load: loadavg()[0] }));
    }
  }
  store.close();
} finally {
  await s3.stop('SIGTERM', 5000);
}
