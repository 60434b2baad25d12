// The master configuration `npm start` runs: the user's own copy of deploy/example/master.yaml
// in the data folder (.data/local/master.yaml), made once and never written again, so that
// edits to it survive every later `npm start`.
//
// The copy is made with the local addresses written in (the web UI's port, PORT, for the links
// in reports; the report receiver's, REPORTS_PORT) and the example's files under the data
// folder. Its first line records those ports and the example it came from, so that a later
// start with other ports, or after the example changed, says so instead of silently running
// with stale addresses; deleting the copy is how to get a fresh one.
//
// An edit applies to the API and the master as soon as the file changes
// (services/core/config/reload.ts; `npm run reload` says whether each took it); the few keys
// a master takes only at start (services/master/reconfigure.ts) at `npm stop && npm start`.
//
// Plain TypeScript that Node runs as it is: deploy/local/start.sh runs
// `node deploy/local/local-config.ts EXAMPLE COPY DATA PORT REPORTS_PORT`, which prints to
// stdout the lines `npm start` shows at its end (and its warnings to stderr at once); the
// tests call prepareLocalConfig().
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');

export interface LocalConfigInput {
  /** deploy/example/master.yaml */
  example: string;
  /** the copy the processes read */
  copy: string;
  /** the data folder, written in for the example's `.data/local/` */
  data: string;
  /** PORT: the API's, for buildbotURL */
  apiPort: string;
  /** REPORTS_PORT: the report receiver's */
  reportsPort: string;
}

export interface LocalConfig {
  /** Whether this call made the copy (false: an existing copy was kept as it is). */
  made: boolean;
  /** Lines for the user, in the order `npm start` prints them. */
  lines: string[];
  /** What is probably wrong with a kept copy (also among `lines`). */
  warnings: string[];
}

const show = (p: string) => (p.startsWith(`${ROOT}/`) ? relative(ROOT, p) : p);
const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

// The first line of a copy: what it was made from and with (read back by recorded()).
const header = (example: string, text: string, i: LocalConfigInput) =>
  `# npm start made this copy of ${show(example)} (sha256 ${sha(text)}) with PORT=${i.apiPort} REPORTS_PORT=${i.reportsPort}\n` +
  `# It is yours: npm start never writes it again. The API and the master apply edits as the file\n` +
  `# changes (npm run reload says so). Delete it for a fresh copy.\n`;

function recorded(copy: string): { sha: string; apiPort: string; reportsPort: string } | null {
  const m =
    /^# npm start made this copy of .* \(sha256 ([0-9a-f]+)\) with PORT=(\S+) REPORTS_PORT=(\S+)$/m.exec(
      copy,
    );
  return m ? { sha: m[1]!, apiPort: m[2]!, reportsPort: m[3]! } : null;
}

/** Makes the copy if there is none; else keeps it and says what differs from this start. */
export function prepareLocalConfig(i: LocalConfigInput): LocalConfig {
  const example = readFileSync(i.example, 'utf8');
  const where = show(i.copy);
  const fresh = `delete it (rm ${where}) and npm start makes a fresh copy`;
  const warnings: string[] = [];
  const lines: string[] = [];
  let made = false;
  if (!existsSync(i.copy)) {
    const text = example
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${i.apiPort}`)
      .replaceAll('127.0.0.1:8083', `127.0.0.1:${i.reportsPort}`)
      .replaceAll('.data/local/', `${i.data}/`);
    // Exclusive: never over a copy that appeared meanwhile. Private, like the users file: the
    // user may add secrets to it.
    writeFileSync(i.copy, header(i.example, example, i) + text, { flag: 'wx', mode: 0o600 });
    made = true;
    lines.push(`The configuration is ${where}, a copy of ${show(i.example)} made now: edit it,`);
  } else {
    const r = recorded(readFileSync(i.copy, 'utf8'));
    lines.push(`The configuration is ${where}, your copy, kept as it is: edit it,`);
    if (!r) {
      warnings.push(
        `${where} has no record of the ports it was made with (an older npm start made it), so its ` +
          `addresses may be stale; ${fresh}.`,
      );
    } else {
      for (const [name, was, now] of [
        ['PORT', r.apiPort, i.apiPort],
        ['REPORTS_PORT', r.reportsPort, i.reportsPort],
      ] as const) {
        if (was !== now)
          warnings.push(
            `${where} was made with ${name}=${was} but this start has ${name}=${now}: its addresses ` +
              `still say ${was}. Change them in it, or ${fresh}.`,
          );
      }
      if (r.sha !== sha(example))
        warnings.push(
          `${show(i.example)} has changed since ${where} was made from it: ` +
            `diff ${show(i.example)} ${where} shows how; ${fresh}.`,
        );
    }
  }
  lines.push(
    'then npm run reload: the API and the master run it at once, no build stopped ' +
      `(npm run checkconfig -- ${where} checks it first).`,
  );
  lines.push(retentionLine(i.copy));
  for (const w of warnings) lines.push(`WARNING: ${w}`);
  return { made, lines, warnings };
}

// One line on what the copy's retention section deletes and how often, read from the copy
// itself: what runs, whatever the example says.
function retentionLine(copy: string): string {
  let section: unknown;
  try {
    section = (parse(readFileSync(copy, 'utf8')) as { retention?: unknown } | null)?.retention;
  } catch {
    return `Retention: ${show(copy)} does not parse; the master will say why.`;
  }
  if (!section || typeof section !== 'object' || Object.keys(section).length === 0)
    return `Retention: none in ${show(copy)}, so everything is kept forever (docs/retention.md).`;
  const { period_seconds, ...rules } = section as Record<string, unknown>;
  const flat = (o: Record<string, unknown>, prefix: string): string[] =>
    Object.entries(o).flatMap(([k, v]) =>
      v && typeof v === 'object'
        ? flat(v as Record<string, unknown>, `${prefix}${k}.`)
        : [`${prefix}${k} ${v}`],
    );
  return (
    `Retention (docs/retention.md) deletes old builds, logs and artifacts every ${period_seconds ?? 3600} s: ` +
    `${flat(rules, '').join(', ')}.`
  );
}

if (import.meta.main) {
  const [example, copy, data, apiPort, reportsPort] = process.argv.slice(2);
  if (!example || !copy || !data || !apiPort || !reportsPort) {
    process.stderr.write('usage: node deploy/local/local-config.ts EXAMPLE COPY DATA PORT REPORTS_PORT\n');
    process.exit(1);
  }
  const r = prepareLocalConfig({ example, copy, data, apiPort, reportsPort });
  for (const w of r.warnings) process.stderr.write(`WARNING: ${w}\n`);
  process.stdout.write(`${r.lines.join('\n')}\n`);
}
