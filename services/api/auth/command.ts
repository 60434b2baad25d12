// `npm run auth -- <command>`: what an operator does to logins from a shell (auth-cli.ts
// runs it against the API's Redis). One command for now:
//   unblock <user|address>   clears the login throttle of that user (everywhere) or address
// Answers the process's exit code: 0 done, 2 a usage error, 1 Redis did not answer.
import type { Redis } from 'ioredis';
import { RedisUnavailable } from './counters.js';
import { unblockLogins } from './login-unblock.js';

export const USAGE = 'usage: npm run auth -- unblock <user|address>';

export async function runAuthCommand(
  argv: readonly string[],
  deps: { redis: Redis; keyPrefix: string; print: (line: string) => void },
): Promise<number> {
  const [command, who, ...extra] = argv;
  if (command !== 'unblock' || who === undefined || who === '' || extra.length > 0) {
    deps.print(USAGE);
    return 2;
  }
  try {
    const r = await unblockLogins(deps.redis, deps.keyPrefix, who);
    deps.print(`user ${JSON.stringify(who)}: ${r.user} throttle bucket(s) cleared`);
    if (r.address !== null) deps.print(`address ${who}: ${r.address} throttle bucket(s) cleared`);
    return 0;
  } catch (err) {
    if (!(err instanceof RedisUnavailable)) throw err;
    deps.print(`redis did not answer: ${err.message}`);
    return 1;
  }
}
