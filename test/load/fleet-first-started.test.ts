// Phase A's "first build started" (load/fleet/first-started.ts): each master's first build
// `new` event, heard on the masters' channel of a real Redis as the masters publish it.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { listenBuildsStarted, newBuildMaster } from '../../load/fleet/first-started.js';
import { publish } from '../../services/core/events/bus.js';
import { testEnv } from '../helpers/env.js';
import { waitFor } from '../helpers/wait.js';

// Far from any id another test's masters get, since a channel is shared by the whole server.
const [A, B] = [900_001, 900_002];
const build = (buildid: number, masterid: number) => ({ buildid, builderid: 1, number: 1, masterid });

describe("a master's first build started", () => {
  const redis = new Redis(testEnv().redisUrl);
  afterAll(() => redis.disconnect());

  it('reads the master of a build `new` event and nothing else', () => {
    expect(newBuildMaster(JSON.stringify({ k: 'builds/7/new', m: build(7, A) }))).toBe(A);
    expect(newBuildMaster(JSON.stringify({ k: 'builds/7/finished', m: build(7, A) }))).toBeNull();
    expect(newBuildMaster(JSON.stringify({ k: 'builders/1/builds/1/new', m: build(7, A) }))).toBeNull();
    expect(newBuildMaster(JSON.stringify({ k: 'builds/7/new', m: { buildid: 7 } }))).toBeNull();
  });

  it("tells each build's start with its master, through Redis", async () => {
    const END = 900_003; // published last: once it is heard, every event before it was
    const heard: number[] = [];
    const stop = await listenBuildsStarted(testEnv().redisUrl, (masterid) => {
      if ([A, B, END].includes(masterid)) heard.push(masterid);
    });
    try {
      await publish(redis, ['builds', 1, 'steps', 2], { stepid: 2, masterid: A }); // not a build's new
      await publish(redis, ['builds', 11, 'new'], build(11, A));
      await publish(redis, ['builds', 12, 'new'], build(12, A));
      await publish(redis, ['builds', 21, 'new'], build(21, B));
      await publish(redis, ['builds', 13, 'new'], build(13, A));
      await publish(redis, ['builds', 22, 'new'], build(22, B));
      await publish(redis, ['builds', 31, 'new'], build(31, END));
      await waitFor('the last event heard', () => heard.includes(END));
      expect(heard).toEqual([A, A, B, A, B, END]);
    } finally {
      stop();
    }
  });
});
