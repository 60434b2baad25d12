// The servers npm test started. Running vitest without them is a mistake worth a clear message.
export function testEnv(): { databaseUrl: string; redisUrl: string } {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    throw new Error('TEST_DATABASE_URL and TEST_REDIS_URL are not set: run the tests with `npm test`');
  }
  return { databaseUrl, redisUrl };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
