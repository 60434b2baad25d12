// The oracle's API as a process: test/helpers/api.ts's apiProcess with the oracle's master
// configuration (its force schedulers), silent. Kept under its old name for tests written
// against it; a new test calls apiProcess itself.
import { type ApiProcess, apiProcess } from '../../helpers/api.js';
import { ORACLE_MASTER_YAML } from './harness.js';

export type { ApiProcess };

export function startApiProcess(databaseUrl: string): Promise<ApiProcess> {
  return apiProcess({ databaseUrl, config: ORACLE_MASTER_YAML, env: { LOG_LEVEL: 'silent' } });
}
