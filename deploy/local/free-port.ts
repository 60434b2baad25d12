// A port nothing listens on, for a server a test (or deploy/local's test script) is about to
// start, drawn so that two suites on one machine never hand out the same one.
//
// From 25000-32767: below the kernel's ephemeral range (32768-60999 on Linux), where no
// outgoing connection takes a port by itself. 21000-24999 are left to the servers people
// start by hand (deploy/local's and each engineer's own ranges).
//
// Checking that a port is free is not enough: between the check and the server's listen
// (seconds for a master, which registers itself before it opens its worker port, on a loaded
// machine) another suite's check finds the same port free too, and one of the two servers
// fails with EADDRINUSE. Seen in 2 of 4 full runs, and in a focused run, while five suites ran
// on this machine (load/results/test-suite.md). So a port drawn is also reserved: a file named
// after it, created exclusively in a folder every suite shares, in the current time slot; a port
// reserved in this slot or the last is passed over, so a reservation holds 10 to 20 minutes, long
// past any server's start, and then lapses by itself (the server holding the port keeps it from
// the next check). Nothing needs releasing, so a suite that is killed leaves nothing behind that
// blocks another.
//
// Plain TypeScript that Node runs as it is: deploy/local/lib.sh runs this file
// (`node deploy/local/free-port.ts` prints a port); the tests import freePort().
import { chmodSync, existsSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PORT_LOW = 25_000;
const PORT_HIGH = 32_767;
export const SLOT_MS = 10 * 60_000;
const RESERVED = join(tmpdir(), 'flotilla-test-ports');

/** A port nothing listens on now and no other draw on this machine handed out lately. */
export function freePort(): Promise<number> {
  return drawPort(PORT_LOW, PORT_HIGH);
}

export interface Draw {
  /** Where the reservations are (tests use their own). */
  folder?: string;
  now?: () => number;
}

/** freePort() within low-high; throws once every port there is taken or reserved. */
export async function drawPort(low: number, high: number, draw: Draw = {}): Promise<number> {
  const folder = draw.folder ?? RESERVED;
  const now = draw.now ?? Date.now;
  if (mkdirSync(folder, { recursive: true })) {
    // Every user's suites share it, as they share the ports (sticky: each removes only its own).
    try {
      chmodSync(folder, 0o1777);
    } catch {
      // another user's folder already
    }
  }
  // Random draws: enough tries to find one of a few free ports among the range's thousands.
  for (let tries = 0; tries < 20 * (high - low + 1); tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!reserve(folder, port, Math.floor(now() / SLOT_MS))) continue;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${low}-${high}: all in use or reserved (${folder})`);
}

function reserve(folder: string, port: number, slot: number): boolean {
  if (existsSync(join(folder, `${port}.${slot - 1}`))) return false;
  try {
    writeFileSync(join(folder, `${port}.${slot}`), `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  if (Math.random() < 0.01) forgetOld(folder, slot);
  return true;
}

/** Drops the reservations of slots before the last (no draw looks at them any more). */
function forgetOld(folder: string, slot: number): void {
  for (const name of readdirSync(folder)) {
    const s = Number(name.split('.')[1]);
    if (s < slot - 1) {
      try {
        unlinkSync(join(folder, name));
      } catch {
        // another draw dropped it first
      }
    }
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

if (import.meta.main) console.log(await freePort());
