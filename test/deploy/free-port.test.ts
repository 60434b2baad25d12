// The ports tests and deploy/local's scripts start servers on: a port handed out is reserved
// machine-wide for its slot and the next, so that two suites drawing at once never get the
// same one (deploy/local/free-port.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drawPort, SLOT_MS } from '../../deploy/local/free-port.js';
import { freePort } from '../helpers/processes.js';

const NOW = 1_000 * SLOT_MS + 1;
const folders: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true });
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A folder of reservations of the test's own, which nothing else draws from. */
function folder(): string {
  const f = mkdtempSync(join(tmpdir(), 'flotilla-ports-test-'));
  folders.push(f);
  return f;
}

// Each test draws from a range of one port, which freePort() reserved for it machine-wide: no
// other suite's server takes it meanwhile.
describe('a port drawn', () => {
  it('is not handed out again in its slot or the next, though nothing listens on it', async () => {
    const p = await freePort();
    const draw = { folder: folder(), now: () => NOW };
    expect(await drawPort(p, p, draw)).toBe(p);
    await expect(drawPort(p, p, draw)).rejects.toThrow(`no free port in ${p}-${p}`);
    await expect(drawPort(p, p, { ...draw, now: () => NOW + SLOT_MS })).rejects.toThrow(/no free port/);
    // Two slots on, the reservation has lapsed.
    expect(await drawPort(p, p, { ...draw, now: () => NOW + 2 * SLOT_MS })).toBe(p);
  });

  it('passes over a port reserved by another process, and one something listens on', async () => {
    const p = await freePort();
    const reservedElsewhere = folder();
    writeFileSync(join(reservedElsewhere, `${p}.${Math.floor(NOW / SLOT_MS) - 1}`), '1\n');
    await expect(drawPort(p, p, { folder: reservedElsewhere, now: () => NOW })).rejects.toThrow(
      /no free port/,
    );

    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(p, '127.0.0.1', r));
    await expect(drawPort(p, p, { folder: folder(), now: () => NOW })).rejects.toThrow(/no free port/);
    await new Promise((r) => server.close(r));
    expect(await drawPort(p, p, { folder: folder(), now: () => NOW })).toBe(p);
  });
});

describe('freePort() and deploy/local/lib.sh', () => {
  it('draw below the ephemeral range and leave a reservation every suite on the machine sees', async () => {
    const reserved = join(tmpdir(), 'flotilla-test-ports');
    const slot = () => Math.floor(Date.now() / SLOT_MS);
    const seen = (port: number) =>
      existsSync(join(reserved, `${port}.${slot()}`)) || existsSync(join(reserved, `${port}.${slot() - 1}`));
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(25_000);
    expect(port).toBeLessThanOrEqual(32_767);
    expect(seen(port)).toBe(true);
    const fromShell = Number(
      execFileSync('bash', ['-c', 'source deploy/local/lib.sh && free_port'], { encoding: 'utf8' }).trim(),
    );
    expect(fromShell).toBeGreaterThanOrEqual(25_000);
    expect(fromShell).toBeLessThanOrEqual(32_767);
    expect(fromShell).not.toBe(port);
    expect(seen(fromShell)).toBe(true);
  });
});
