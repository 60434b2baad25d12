// `npm run auth -- unblock <user|address>`: operator commands on logins (auth/command.ts),
// against the Redis the API pods use (REDIS_URL or REDIS_SENTINELS, as the API reads them).
import { loadApiEnv } from '../core/config/env.js';
import { exitOnConfigError } from '../core/config/fatal.js';
import { createRedis } from '../core/redis.js';
import { createLogger } from '../core/telemetry/logger.js';
import { runAuthCommand } from './auth/command.js';
import { REDIS_KEY_PREFIX } from './http/redis-prefix.js';

const env = await exitOnConfigError(createLogger('auth', 'info'), () => loadApiEnv());
const redis = createRedis(env.redis, 'flotilla-auth-cli');
redis.on('error', () => {});
try {
  process.exitCode = await runAuthCommand(process.argv.slice(2), {
    redis,
    keyPrefix: REDIS_KEY_PREFIX,
    print: (line) => console.log(line),
  });
} finally {
  redis.disconnect();
}
