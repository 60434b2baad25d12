// The API as a real process on a fresh copy of the oracle's fixture, for the suites that ask
// it what a Buildbot was asked: started before the file's tests, stopped (by pid) and the
// copy dropped after them.
import { afterAll, beforeAll, expect } from 'vitest';
import { type ApiProcess, startApiProcess } from '../api/lib/api-process.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { psqlFile } from '../helpers/psql.js';

/**
 * The API's base URL (http://127.0.0.1:PORT/api/v2), once beforeAll has run; `addedSql`, a
 * file loaded into the copy before the API starts (Buildbot 4.3's rows).
 */
export function fixtureApi(addedSql?: string): () => string {
  let db: TestDatabase | undefined;
  let api: ApiProcess | undefined;
  beforeAll(async () => {
    db = await createDatabase('fixture');
    if (addedSql) psqlFile(db.url, addedSql);
    api = await startApiProcess(db.url);
  });
  afterAll(async () => {
    if (api) {
      const pid = api.pid;
      await api.stop();
      expect(() => process.kill(pid, 0), `api process ${pid} is gone`).toThrow();
    }
    await db?.drop();
  });
  return () => {
    if (!api) throw new Error('the fixture API is not running');
    return api.base;
  };
}
