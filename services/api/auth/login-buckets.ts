// Token buckets for failed logins, in Redis so every API pod sees the same ones. A bucket
// holds up to `cap` attempts and gets one back every window/cap: a burst of `cap` failures,
// then one attempt per window/cap, for good, however long the guessing goes on (the same long-run
// rate as `cap` per window), and never a wait longer than window/cap for one more try.
// One script checks every bucket of an attempt and takes from all of them, or from none: two
// pods cannot both take the last attempt, and a refused attempt costs the client nothing (it
// checked no password), so hammering a refused login cannot fill anyone's bucket but its own.
// Time is Redis's (TIME): no pod's clock matters. A bucket is deleted by expiry once it
// would be full again. (login-throttle.ts says which buckets an attempt draws from.)
import type { Redis } from 'ioredis';
import { redisInTime } from './counters.js';

/** A bucket: its key, and how many attempts it holds per window. */
export interface Bucket {
  key: string;
  cap: number;
}

// ARGV[1]: the window (ms); ARGV[2]: the index of the user's bucket from everywhere (0: none);
// ARGV[3]: the index of the bucket of the user at the address (0: none); then each key's cap.
// While the user's bucket from everywhere is empty, an address that failed for that user must
// also have waited window/cap since its last attempt (no burst); one that did not fail is let
// in (login-throttle.ts). Answers the wait in ms, 0 when the attempt was taken.
const TAKE = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window = tonumber(ARGV[1])
local everywhere = tonumber(ARGV[2])
local pair = tonumber(ARGV[3])
local level, cap, every, at = {}, {}, {}, {}
for i = 1, #KEYS do
  cap[i] = tonumber(ARGV[3 + i])
  every[i] = window / cap[i]
  local h = redis.call('HMGET', KEYS[i], 't', 'at')
  level[i] = cap[i]
  if h[1] then
    at[i] = tonumber(h[2])
    level[i] = math.min(cap[i], tonumber(h[1]) + (now - at[i]) / every[i])
  end
end
local wait = 0
for i = 1, #KEYS do
  if i ~= everywhere and level[i] < 1 then wait = math.max(wait, (1 - level[i]) * every[i]) end
end
if everywhere > 0 and level[everywhere] < 1 and at[pair] then
  wait = math.max(wait, every[pair] - (now - at[pair]))
end
if wait > 0 then return math.ceil(wait) end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 't', tostring(math.max(0, level[i] - 1)), 'at', now)
  redis.call('PEXPIRE', KEYS[i], window)
end
return 0
`;

// ARGV[1]: the window (ms); then each key's cap. Gives each bucket one attempt back.
const GIVE = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window = tonumber(ARGV[1])
for i = 1, #KEYS do
  local cap = tonumber(ARGV[1 + i])
  local h = redis.call('HMGET', KEYS[i], 't', 'at')
  if h[1] then
    local level = math.min(cap, tonumber(h[1]) + (now - tonumber(h[2])) / (window / cap) + 1)
    redis.call('HSET', KEYS[i], 't', tostring(level), 'at', now)
    redis.call('PEXPIRE', KEYS[i], window)
  end
end
return 0
`;

type WithScripts = Redis & {
  flotillaLoginTake(...args: (string | number)[]): Promise<number>;
  flotillaLoginGive(...args: (string | number)[]): Promise<number>;
};

export class LoginBuckets {
  private readonly redis: WithScripts;

  constructor(
    redis: Redis,
    private readonly windowMs: number,
    private readonly timeoutMs = 500,
  ) {
    const r = redis as WithScripts;
    if (typeof r.flotillaLoginTake !== 'function') {
      redis.defineCommand('flotillaLoginTake', { lua: TAKE });
      redis.defineCommand('flotillaLoginGive', { lua: GIVE });
    }
    this.redis = r;
  }

  /**
   * Takes one attempt from every bucket, or none; answers the wait in ms (0: taken).
   * `everywhere` and `pair` index `buckets` (see TAKE). Throws RedisUnavailable.
   */
  async take(buckets: Bucket[], rule?: { everywhere: number; pair: number }): Promise<number> {
    const ms = await redisInTime(
      this.redis.flotillaLoginTake(
        buckets.length,
        ...buckets.map((b) => b.key),
        this.windowMs,
        rule ? rule.everywhere + 1 : 0,
        rule ? rule.pair + 1 : 0,
        ...buckets.map((b) => b.cap),
      ),
      this.timeoutMs,
    );
    return Number(ms);
  }

  /** Gives each bucket back one attempt (a success was no failure). Throws RedisUnavailable. */
  async give(buckets: Bucket[]): Promise<void> {
    if (buckets.length === 0) return;
    await redisInTime(
      this.redis.flotillaLoginGive(
        buckets.length,
        ...buckets.map((b) => b.key),
        this.windowMs,
        ...buckets.map((b) => b.cap),
      ),
      this.timeoutMs,
    );
  }

  /** Fills buckets up again (deletes them). Throws RedisUnavailable. */
  async fill(keys: string[]): Promise<void> {
    if (keys.length > 0) await redisInTime(this.redis.del(...keys), this.timeoutMs);
  }
}
