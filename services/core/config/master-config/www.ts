// The API pods' HTTP settings: origins, proxies, rate limit, page cache, request limits.
import { z } from 'zod';
import { ignoredWww } from './ignored-keys.js';

// The HTTP face of the API pods (Buildbot's www settings where it has them).
export const www = z
  .object({
    // Origins allowed to call the API from a browser (patterns, `*` any run); default: the
    // origin of PUBLIC_URL, as Buildbot's allowed_origins.
    allowed_origins: z.array(z.string().min(1)).optional(),
    // Which proxies' X-Forwarded-For to believe for the client address (rate limits, login
    // throttling): false (none), true (all), a number of hops, or addresses/CIDR ranges.
    trust_proxy: z
      .union([z.boolean(), z.number().int().min(0), z.array(z.string().min(1)).min(1)])
      .default(false),
    // Requests per client (a logged-in user, else an address; IPv6 by /64) in a window,
    // counted in Redis across API pods; beyond it, 429 with Retry-After.
    rate_limit: z
      .object({
        enabled: z.boolean().default(true),
        requests: z.number().int().positive().default(6000),
        window_seconds: z.number().int().positive().default(60),
      })
      .strict()
      .default({}),
    // Rendered pages each API pod keeps and serves again while the tables they were read
    // from are unchanged; max_mb bounds its memory. A pod learns of writes from the
    // database's notices and serves a kept page from memory while it knows them to be at
    // most max_staleness_ms behind; 0 checks every kept page against the database on every
    // request instead (never stale, one round trip each). See services/api/cache/README.md.
    page_cache: z
      .object({
        enabled: z.boolean().default(true),
        max_mb: z.number().int().positive().default(64),
        max_staleness_ms: z.number().int().min(0).max(60_000).default(50),
      })
      .strict()
      .default({}),
    // Finished logs' raw downloads each API pod keeps on its local disk (a finished log never
    // changes), so that downloading one again reads a file, not every chunk from the
    // database; max_mb bounds the disk they take, dir is where each process makes its private
    // folder (default: this user's own folder in the system's temporary folder). See
    // services/api/read/raw-log-cache.ts.
    raw_log_cache: z
      .object({
        enabled: z.boolean().default(true),
        max_mb: z.number().int().positive().default(256),
        dir: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    // The event endpoints (/ws, /sse): how much one client may hold, so that no client can
    // starve the others. A client is a logged-in user, else an address (IPv6 by /64), as for
    // the rate limit; its connections are counted per API pod. Past a limit: 429 before
    // the connection opens, or the subscription is refused with a 400 frame.
    events: z
      .object({
        max_connections_per_client: z.number().int().positive().default(20),
        max_subscriptions_per_connection: z.number().int().positive().default(200),
        // logs/<id>/lines: each is a live log tailed from Redis, the costly kind.
        max_log_subscriptions_per_connection: z.number().int().positive().default(10),
        // A logged-in client's session is checked again this often: a logout elsewhere, or a
        // change of its user, disconnects it within this time.
        session_check_seconds: z.number().positive().max(300).default(10),
      })
      .strict()
      .default({}),
    // Bigger requests are refused: body 413, request line and headers 431, URL 414.
    limits: z
      .object({
        body_bytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        header_bytes: z
          .number()
          .int()
          .min(1024)
          .default(16 * 1024),
        url_bytes: z
          .number()
          .int()
          .min(256)
          .default(8 * 1024),
      })
      .strict()
      .default({}),
    // Buildbot's `port` and `plugins`: accepted, ignored, named at start (ignored-keys.ts).
    ...ignoredWww,
  })
  .strict();
