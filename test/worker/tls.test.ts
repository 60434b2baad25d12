// Workers over TLS: a master with a certificate admits a worker that trusts its authority,
// over wss://; a worker that does not trust it, or that speaks plain ws://, never gets in
// (and so never sends its password in clear).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterEnv, loadWorkerEnv } from '../../services/core/config/env.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { startWorkerServer, type WorkerServer } from '../../services/master/workers/flotilla/server.js';
import { connectToMaster, type MasterLink } from '../../services/worker/connection.js';
import { waitFor } from '../helpers/wait.js';

const log = createLogger('test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'flotilla-tls-'));
const file = (name: string) => join(dir, name);
let server: WorkerServer;
const links: MasterLink[] = [];

/** `args` are split on spaces: the paths here (mkdtemp under tmpdir) have none. */
function openssl(args: string) {
  execFileSync('openssl', args.split(' '), { stdio: 'ignore' });
}

beforeAll(async () => {
  // A private authority and a certificate it signs for 127.0.0.1, as an operator would issue.
  const ca = `-keyout ${file('ca.key')} -out ${file('ca.pem')}`;
  openssl(`req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=flotilla-test-ca ${ca}`);
  openssl(
    `req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout ${file('master.key')} -out ${file('master.csr')}`,
  );
  // Clients check an IP address against the subject alternative names, never the CN.
  writeFileSync(file('san.ext'), 'subjectAltName = IP:127.0.0.1\n');
  openssl(
    `x509 -req -in ${file('master.csr')} -CA ${file('ca.pem')} -CAkey ${file('ca.key')} -CAcreateserial ` +
      `-days 2 -extfile ${file('san.ext')} -out ${file('master.pem')}`,
  );
  const env = loadMasterEnv({
    MASTER_CONFIG: '/x.yaml',
    WORKER_TLS_CERT_FILE: file('master.pem'),
    WORKER_TLS_KEY_FILE: file('master.key'),
  });
  server = await startWorkerServer({
    host: '127.0.0.1',
    port: 0,
    config: parseMasterConfig('workers: [{ name: w1, password: pw }]'),
    masterName: 'm',
    log,
    tls: { cert: readFileSync(env.workerTls!.certFile), key: readFileSync(env.workerTls!.keyFile) },
  });
});
afterAll(async () => {
  for (const l of links) await l.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A link, and how many times its connection has failed so far (from its own log). */
function connect(url: string, ca?: Buffer) {
  let failures = 0;
  const counting = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        if (line.includes('master connection error')) failures++;
      },
    },
  );
  const link = connectToMaster({
    url,
    name: 'w1',
    password: 'pw',
    log: counting,
    handlers: { message: () => {}, lost: () => {}, shutdown: () => {} },
    ...(ca ? { ca } : {}),
  });
  links.push(link);
  return Object.assign(link, { failures: () => failures });
}

describe('the worker link over TLS', () => {
  it('refuses a worker that does not trust the master certificate, and plain ws://', async () => {
    const untrusting = connect(`wss://127.0.0.1:${server.port}/worker`);
    const plain = connect(`ws://127.0.0.1:${server.port}/worker`);
    // Each is refused, tries again and is refused again: never let in.
    await waitFor(
      'both links to be refused twice',
      () => untrusting.failures() >= 2 && plain.failures() >= 2,
    );
    expect(untrusting.master()).toBeNull();
    expect(plain.master()).toBeNull();
    expect(server.get('w1')).toBeUndefined();
    await untrusting.close();
    await plain.close();
  });

  it('admits a worker that trusts the authority (MASTER_CA_FILE)', async () => {
    const env = loadWorkerEnv({
      WORKER_NAME: 'w1',
      MASTER_URL: `wss://127.0.0.1:${server.port}/worker`,
      MASTER_CA_FILE: file('ca.pem'),
    });
    const link = connect(env.masterUrl, readFileSync(env.masterCaFile!));
    await waitFor('the link to be admitted', () => link.master() !== null);
    expect(link.master()).toBe('m');
    expect(server.get('w1')?.lost.aborted).toBe(false);
  });

  it('names the variables that are wrong', () => {
    expect(() =>
      loadMasterEnv({ MASTER_CONFIG: '/x.yaml', WORKER_TLS_CERT_FILE: file('master.pem') }),
    ).toThrow(/set both or neither/);
    expect(() => loadWorkerEnv({ WORKER_NAME: 'w', MASTER_CA_FILE: file('none.pem') })).toThrow(
      /MASTER_CA_FILE: cannot read/,
    );
  });
});
