// npm run reload: apply an edit of `npm start`'s configuration (.data/local/master.yaml)
// without a restart, as far as Flotilla can yet (issue 33 §3). The API pod that `npm start`
// started is sent SIGHUP (found by its pid file, as `npm stop` finds it), and its log says
// whether it runs the new configuration or refused it (services/core/config/reload.ts); this prints
// that. Masters do not reload yet: a running master is named with the command that restarts
// it alone.
//
// Plain TypeScript that Node runs as it is (`node deploy/local/reload.ts`); FLOTILLA_DATA
// moves the data folder, as for npm start. Exit code: 0 when every API pod runs the file, 1
// when one refused it or did not answer, 2 when none runs.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
// How long a pod may take to build the new configuration (a new read pool, the hooks).
const ANSWER_MS = 30_000;

/** The pid in `run/NAME.pid` when that process is alive; null otherwise. */
function alive(data: string, name: string): number | null {
  const file = join(data, 'run', `${name}.pid`);
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

interface Answer {
  msg: string;
  hash?: string;
  previous?: string;
  code?: string;
  problems?: string[];
}

/** The pod's first reload line after byte `from` of its log, within ANSWER_MS; null if none. */
async function answerIn(log: string, from: number): Promise<Answer | null> {
  const end = Date.now() + ANSWER_MS;
  while (Date.now() < end) {
    const text = readFileSync(log).subarray(from).toString('utf8');
    for (const line of text.split('\n')) {
      if (!line.includes('"msg":"configuration reload')) continue;
      try {
        return JSON.parse(line) as Answer;
      } catch {
        // A line still being written: read again.
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

export async function reloadLocal(data: string): Promise<{ lines: string[]; code: number }> {
  const show = (p: string) => relative(process.cwd(), p) || '.';
  const lines: string[] = [];
  let code = 0;
  const api = alive(data, 'api');
  if (api === null) {
    lines.push(`no API runs from ${show(data)} (npm start starts one)`);
    code = 2;
  } else {
    const log = join(data, 'logs', 'api.log');
    const from = existsSync(log) ? statSync(log).size : 0;
    process.kill(api, 'SIGHUP');
    const answer = existsSync(log) ? await answerIn(log, from) : null;
    if (!answer) {
      lines.push(
        `api (pid ${api}): sent SIGHUP, no answer in its log (${show(log)}) within ${ANSWER_MS / 1000} s`,
      );
      code = 1;
    } else if (answer.msg === 'configuration reloaded') {
      lines.push(
        answer.hash === answer.previous
          ? `api (pid ${api}): runs configuration ${answer.hash}, unchanged (it reads the file when it changes)`
          : `api (pid ${api}): reloaded, runs configuration ${answer.hash} (was ${answer.previous})`,
      );
    } else {
      lines.push(`api (pid ${api}): refused the file and runs the one it had (${answer.code ?? 'error'}):`);
      for (const p of answer.problems ?? [answer.msg]) lines.push(`  ${p}`);
      code = 1;
    }
  }
  const master = alive(data, 'master');
  if (master !== null)
    lines.push(
      `master (pid ${master}): masters do not reload yet; it runs the configuration it started with. ` +
        `To restart it alone: kill ${master}, and once it has exited, npm start (it starts what is not running)`,
    );
  return { lines, code };
}

if (import.meta.main) {
  const data = process.env.FLOTILLA_DATA ?? join(ROOT, '.data/local');
  const { lines, code } = await reloadLocal(data);
  for (const l of lines) console.log(l);
  process.exitCode = code;
}
