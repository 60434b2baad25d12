// npm run reload: apply an edit of `npm start`'s configuration (.data/local/master.yaml)
// without a restart (issue 33 §3). The API and the master that `npm start` started are each
// sent SIGHUP (found by their pid files, as `npm stop` finds them), and each one's log says
// whether it runs the new configuration or refused it (services/core/config/reload.ts); this
// prints that, and for the master which sections it took on (services/master/reconfigure.ts).
// Both also reload on their own when the file changes; the SIGHUP makes it certain, and
// answers.
//
// Plain TypeScript that Node runs as it is (`node deploy/local/reload.ts`); FLOTILLA_DATA
// moves the data folder, as for npm start. Exit code: 0 when every process runs the file, 1
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
  /** The master's: the sections it took on. */
  changed?: string[];
  /** The master's: the parts that did not restart (RELOAD_INCOMPLETE). */
  notRestarted?: string[];
}

/** The process's first reload line after byte `from` of its log, within ANSWER_MS; null if none. */
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

/** Signal one process and say what it answered; its line(s) and whether it runs the file. */
async function reloadOne(data: string, name: string, pid: number): Promise<{ lines: string[]; ok: boolean }> {
  const show = (p: string) => relative(process.cwd(), p) || '.';
  const log = join(data, 'logs', `${name}.log`);
  const from = existsSync(log) ? statSync(log).size : 0;
  process.kill(pid, 'SIGHUP');
  const answer = existsSync(log) ? await answerIn(log, from) : null;
  const who = `${name} (pid ${pid})`;
  if (!answer)
    return {
      lines: [`${who}: sent SIGHUP, no answer in its log (${show(log)}) within ${ANSWER_MS / 1000} s`],
      ok: false,
    };
  if (answer.code === 'RELOAD_INCOMPLETE')
    return {
      lines: [
        `${who}: runs configuration ${answer.hash}, but ${(answer.notRestarted ?? []).join(', ')} did not restart (see its log; npm run reload tries again)`,
      ],
      ok: false,
    };
  if (answer.msg !== 'configuration reloaded')
    return {
      lines: [
        `${who}: refused the file and runs the one it had (${answer.code ?? 'error'}):`,
        ...(answer.problems ?? [answer.msg]).map((p) => `  ${p}`),
      ],
      ok: false,
    };
  const changed = answer.changed?.length ? `; took on: ${answer.changed.join(', ')}` : '';
  return {
    lines: [
      answer.hash === answer.previous
        ? `${who}: runs configuration ${answer.hash}, unchanged (it reads the file when it changes)`
        : `${who}: reloaded, runs configuration ${answer.hash} (was ${answer.previous})${changed}`,
    ],
    ok: true,
  };
}

export async function reloadLocal(data: string): Promise<{ lines: string[]; code: number }> {
  const show = (p: string) => relative(process.cwd(), p) || '.';
  const running = ['api', 'master'].flatMap((name) => {
    const pid = alive(data, name);
    return pid === null ? [] : [{ name, pid }];
  });
  if (running.length === 0)
    return { lines: [`nothing runs from ${show(data)} (npm start starts it)`], code: 2 };
  const lines: string[] = [];
  let code = 0;
  // One after the other: each answer is read from its own log.
  for (const { name, pid } of running) {
    const one = await reloadOne(data, name, pid);
    lines.push(...one.lines);
    if (!one.ok) code = 1;
  }
  for (const name of ['api', 'master'])
    if (!running.some((r) => r.name === name)) lines.push(`no ${name} runs from ${show(data)}`);
  return { lines, code };
}

if (import.meta.main) {
  const data = process.env.FLOTILLA_DATA ?? join(ROOT, '.data/local');
  const { lines, code } = await reloadLocal(data);
  for (const l of lines) console.log(l);
  process.exitCode = code;
}
