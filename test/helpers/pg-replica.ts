// A real streaming replica of the test PostgreSQL, from Debian's PostgreSQL of the same major
// version: pg_basebackup copies the running cluster (through its socket folder, as the
// postgres OS user, whom local connections trust) into a fresh folder, writes standby.signal
// and primary_conninfo (-R), and the replica's postmaster runs as postgres on 127.0.0.1 with
// its socket in its own folder. It is started and stopped by its pid, and its folder removed.
//
// No replication slot: a slot left behind by a test that crashed would keep the shared test
// cluster's log forever. The base backup carries the log it needs (-X stream), and the
// replica connects straight after; the default max_wal_size keeps far more than that gap.
// --no-sync: a throwaway copy needs no fsync (it took 10 of the 11 s of a backup here).
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  flushedWritePosition,
  pauseReplay,
  replayState,
  resumeReplay,
  serverMajor,
} from '../../services/core/data/replication.js';
import { type ConnectionPool, createPool } from '../../services/core/db/pool.js';
import { testEnv } from './env.js';
import { freePort, type Running, start } from './processes.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);

export interface Replica {
  port: number;
  pid: number;
  /** The replica's URL for one of the test cluster's databases, as the API's role. */
  url(database: string): string;
  /** Stop applying the primary's log (pg_wal_replay_pause), and wait until it has stopped. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had committed when called. */
  caughtUp(): Promise<void>;
  /** SIGKILL the postmaster, as a lost node (its children exit when they notice). */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The postgres OS user (the test cluster's owner), whom the replica runs as. */
function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Debian's binaries of the test cluster's own major version (a replica must match it). */
async function pgBin(primary: ConnectionPool): Promise<string> {
  const major = await serverMajor(primary);
  const bin = `/usr/lib/postgresql/${major}/bin`;
  if (!existsSync(`${bin}/pg_basebackup`)) {
    throw new Error(`${bin}/pg_basebackup is missing (Debian's postgresql-${major})`);
  }
  return bin;
}

/**
 * pg_basebackup's arguments for a throwaway replica of the cluster at host:port (a socket
 * folder) in `dir`: as postgres, with standby.signal and primary_conninfo written (-R), the
 * log it needs streamed alongside (-X stream), no fsync and no manifest (see above).
 */
export function basebackupArgs(host: string, port: string, dir: string): string[] {
  return [
    '-h',
    host,
    '-p',
    port,
    '-U',
    'postgres',
    '-D',
    dir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '-w',
    '--no-sync',
    '--no-manifest',
  ];
}

/** A replica of the whole test cluster; `superuser` pools reach it as postgres through its socket. */
export async function startReplica(): Promise<Replica> {
  const socketDir = process.env.TEST_PG_SOCKET_DIR;
  if (!socketDir) throw new Error('TEST_PG_SOCKET_DIR is not set: run the tests with `npm test`');
  const primaryUrl = new URL(testEnv().databaseUrl);
  const primaryPort = primaryUrl.port;
  const primary = createPool(testEnv().databaseUrl, { poolSize: 1 });
  const { uid, gid } = postgresIds();
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-replica-'));
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o700);
  const pools: ConnectionPool[] = [primary];
  let proc: Running | null = null;
  const stop = async () => {
    await Promise.all(pools.map((p) => p.dispose().catch(() => {})));
    // SIGINT: PostgreSQL's fast shutdown (SIGTERM's smart one waits for every client to leave).
    await proc?.stop('SIGINT', 20_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const bin = await pgBin(primary);
    await run(`${bin}/pg_basebackup`, basebackupArgs(socketDir, primaryPort, dir), {
      uid,
      gid,
      env: { ...process.env, PGAPPNAME: 'flotilla-test-basebackup' },
    });
    const port = await freePort();
    proc = start(
      `${bin}/postgres`,
      [
        '-D',
        dir,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        // The primary's 256 MB is for the suite's load; a replica of a test needs little.
        '-c',
        'shared_buffers=32MB',
        '-c',
        'hot_standby=on',
        '-c',
        `cluster_name=flotilla-test-replica-${port}`,
      ],
      {},
      { uid, gid, cwd: dir },
    );
    const superuser = createPool(
      `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${port}`,
      {
        poolSize: 1,
      },
    );
    pools.push(superuser);
    const replica: Replica = {
      port,
      pid: proc.pid,
      url: (database) => {
        const u = new URL(primaryUrl);
        u.port = String(port);
        u.pathname = `/${database}`;
        return u.toString();
      },
      async pause() {
        await pauseReplay(superuser);
        await waitFor('the replica to pause its replay', async () => (await replayState(superuser)).paused, {
          proc: proc!,
        });
      },
      async resume() {
        await resumeReplay(superuser);
      },
      async caughtUp() {
        const target = await flushedWritePosition(primary);
        await waitFor(
          `the replica to replay up to ${target}`,
          async () => ((await replayState(superuser)).replayed ?? -1n) >= target,
          { proc: proc! },
        );
      },
      async kill() {
        await proc!.stop('SIGKILL');
      },
      stop,
    };
    await waitFor(
      'the replica to accept connections and stream',
      async () => {
        const s = await replayState(superuser);
        return s.inRecovery && s.replayed !== null;
      },
      { proc },
    );
    await replica.caughtUp();
    return replica;
  } catch (err) {
    await stop();
    throw err;
  }
}
