// A real Redis Sentinel deployment on loopback, from Debian's redis-server and redis-sentinel
// (npm test installs the latter): a primary, one replica, and three sentinels that agree (a
// quorum of two) on when the primary is down. Every process is started here and stopped by
// its pid; each sentinel rewrites its own configuration file, so each gets a writable one.
//
// The sentinels decide fast (down-after 1.5 s, failover-timeout 3 s) so that a test waits
// seconds, not the minutes of the defaults; what a test waits for is a condition (the
// sentinels naming the new primary), never a length of time. Not faster: with 500 ms, one CI
// run (the whole suite at once on 2 cores) never delivered the event the sentinel test
// published before its failover. A loaded machine can keep a sentinel or the primary off the
// CPU for half a second, and a failover nobody asked for leaves a subscriber on a demoted
// server; the test now reports where its clients and the sentinels stand when that happens.
// With a cuttable replica link, down-after is 6 s: the sentinels promote a replica only while
// its link has been down less than ten times down-after beyond the primary's failure, and the
// redelivery test's jobs run between the cut and the kill; with 1.5 s (15 s of room) a CI run
// at load 15 timed the test out at 180 s (its jobs slow to start and run, the replica too stale
// to promote, the failover never came).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { SentinelTarget } from '../../services/core/redis.js';
import { freePort, type Running, start } from './processes.js';
import { waitFor } from './wait.js';

export const MASTER_NAME = 'flotilla-test';

export interface SentinelDeployment {
  primaryPort: number;
  replicaPort: number;
  sentinelPorts: number[];
  target: SentinelTarget;
  /** The port the sentinels name as the primary now. */
  currentPrimaryPort(): Promise<number>;
  /** SIGKILL the primary (no shutdown, no last save), as a crashed node. */
  killPrimary(): Promise<void>;
  /**
   * With `cuttableLink`: from now on the replica receives nothing of the primary, so what the
   * primary takes meanwhile is lost when the primary dies: a replication lag made to order.
   * (A stopped replica would not do: what the primary sent waits in the replica's socket and
   * arrives when it goes on.) The sentinels promote a replica only if its link has been down
   * less than ten times down-after (60 s here) beyond the primary's failure: kill the primary soon.
   */
  cutReplicaLink(): Promise<void>;
  /** Resolves once the sentinels have promoted another server; its port. */
  waitForFailover(): Promise<number>;
  stop(): Promise<void>;
}

// One `redis-cli`-like round trip to a server or a sentinel, on a connection of its own that
// neither retries nor queues (a dead server answers "no" at once).
async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

function startServer(port: number, dir: string, extra: string[] = []): Running {
  return start(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      ...extra,
    ],
    {},
  );
}

// The user the replica replicates as when its link can be cut (see cutReplicaLink).
const REPLICA_USER = 'flotilla-replica';
const REPLICA_PASSWORD = 'replica-secret';

export async function startSentinelDeployment(
  opts: {
    /**
     * The replica replicates as a user of its own, so that its link can be cut (a relay
     * between the two would not do: the sentinels see the replica following another address
     * and point it at the primary again).
     */
    cuttableLink?: boolean;
    /** Where its five ports come from (default: free ones of the tests' range). */
    port?: () => Promise<number>;
  } = {},
): Promise<SentinelDeployment> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-sentinel-'));
  const downAfterMs = opts.cuttableLink ? 6000 : 1500;
  const procs: Running[] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 5; i++) ports.push(await (opts.port ?? freePort)());
    const [primaryPort, replicaPort, ...sentinelPorts] = ports as [number, number, number, number, number];
    const primary = startServer(primaryPort, dir, ['--dbfilename', 'primary.rdb']);
    procs.push(primary);
    await waitFor('the primary', async () => primary.output().includes('Ready to accept connections'), {
      proc: primary,
    });
    if (opts.cuttableLink)
      await ask(primaryPort, (r) =>
        r.call('ACL', 'SETUSER', REPLICA_USER, 'on', `>${REPLICA_PASSWORD}`, '~*', '&*', '+@all'),
      );
    const replica = startServer(replicaPort, dir, [
      '--dbfilename',
      'replica.rdb',
      '--replicaof',
      '127.0.0.1',
      String(primaryPort),
      ...(opts.cuttableLink ? ['--masteruser', REPLICA_USER, '--masterauth', REPLICA_PASSWORD] : []),
    ]);
    procs.push(replica);
    await waitFor(
      'the replica to sync',
      async () => (await ask(replicaPort, (r) => r.info('replication'))).includes('master_link_status:up'),
      { proc: replica },
    );

    const sentinels = sentinelPorts.map((port, i) => {
      const conf = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
          `sentinel failover-timeout ${MASTER_NAME} 3000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
      const p = start('redis-sentinel', [conf], {});
      procs.push(p);
      return p;
    });
    // A failover needs each sentinel to know the replica and the other two (they learn both
    // through the primary's hello channel, every 2 s).
    for (const [i, port] of sentinelPorts.entries()) {
      await waitFor(
        `sentinel ${port} to know the replica and the other sentinels`,
        async () => {
          const [replicas, peers] = await ask(port, async (r) => [
            (await r.call('SENTINEL', 'REPLICAS', MASTER_NAME)) as unknown[],
            (await r.call('SENTINEL', 'SENTINELS', MASTER_NAME)) as unknown[],
          ]);
          return replicas.length === 1 && peers.length === 2;
        },
        { proc: sentinels[i]! },
      );
    }

    const primarySeenBy = async (sentinelPort: number) => {
      const addr = (await ask(sentinelPort, (r) =>
        r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME),
      )) as [string, string];
      return Number(addr[1]);
    };
    return {
      primaryPort,
      replicaPort,
      sentinelPorts,
      target: {
        sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
        masterName: MASTER_NAME,
      },
      currentPrimaryPort: () => primarySeenBy(sentinelPorts[0]!),
      async killPrimary() {
        await primary.stop('SIGKILL');
      },
      async cutReplicaLink() {
        if (!opts.cuttableLink) throw new Error('the deployment was started without a cuttable replica link');
        // Its user refused from now on, then its connection closed: it cannot come back.
        await ask(primaryPort, async (r) => {
          await r.call('ACL', 'SETUSER', REPLICA_USER, 'off');
          await r.call('CLIENT', 'KILL', 'USER', REPLICA_USER);
        });
      },
      async waitForFailover() {
        // Promoted: every sentinel names the replica, and the replica says it is the primary.
        await waitFor('the sentinels to promote the replica', async () => {
          for (const port of sentinelPorts) if ((await primarySeenBy(port)) !== replicaPort) return false;
          return (await ask(replicaPort, (r) => r.info('replication'))).includes('role:master');
        });
        return replicaPort;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
