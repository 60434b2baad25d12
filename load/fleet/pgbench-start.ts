// load/fleet/pgbench-start.sql written from a real start, and read back as pgbench sends it.
// The script is PostgreSQL's own limit for phase S's builds started a second (issue 35 §1
// item 2), so it must be the statements a start makes, no fewer and no others: those were
// once written by hand from the code, and stopped at the properties while a start went on to
// its first command (load/results/fleet.md, 2026-11-29 02:17). Now
// test/master/builds/statements.test.ts records a start of the fleet's shape on an in-process
// master, from its claim to its first command, and compares it with the script; with
// PGBENCH_START_WRITE=1 it writes the script from that record first (REGENERATE below).
//
// Every value a master sends as a parameter is a pgbench variable here, so that under
// `-M extended` or `-M prepared` PostgreSQL receives the masters' own texts, `$n` for `$n`.
// pgbench's first statement (its own, not a master's) takes the next request and sets them
// all: the ids a start names, computed from the request (ROLES: pgbench.sh seeds the tables
// so that a build's, its steps' and its log's ids are known before their INSERTs), the time,
// and every other value as the recorded start had it. A null value is written NULL in the
// text (pgbench has no null variable), as the comparison writes it on the masters' side.
import { resolve } from 'node:path';

/** A statement as a master sent it: its text with `$n` for each value, and the values. */
export interface SentStatement {
  text: string;
  values: readonly unknown[];
}

/**
 * The ids a start names, and how pgbench's first statement computes each from the request
 * `r` it takes: pgbench.sh seeds one master and one worker (id 1 each) and gives builds, logs
 * and steps ids from the session's `fleet.brid` and `fleet.step`, which that statement sets.
 */
export const ROLES = {
  brid: 'r.id',
  buildsetid: 'r.buildsetid',
  builderid: 'r.builderid',
  masterid: '1',
  workerid: '1',
  buildid: 'r.id',
  // A start's two steps, worker_preparation (number 0) and its one `true` step, in that order.
  step0: '2 * r.id',
  step1: '2 * r.id + 1',
  logid: 'r.id',
} as const;
export type Role = keyof typeof ROLES;

export const SCRIPT_PATH = 'load/fleet/pgbench-start.sql';
export const SCRIPT_FILE = resolve(import.meta.dirname, 'pgbench-start.sql');
export const REGENERATE = 'PGBENCH_START_WRITE=1 FOCUS=1 npm test -- test/master/builds/statements.test.ts';

// A value this close to the recording's time is the time: pgbench sends its own.
const NOW_SLACK_S = 3600;

const HEADER = `-- The statements of one build start as the masters send them, from its request's claim to its
-- first command, for pgbench to run alone: PostgreSQL's own limit for the builds started a
-- second of phase S (load/fleet/burst.ts; load/fleet/pgbench.sh seeds the requests and runs
-- this). GENERATED from a real start by load/fleet/pgbench-start.ts; do not edit. When the
-- masters' statements change, test/master/builds/statements.test.ts fails; regenerate with
--   ${REGENERATE}
-- Each transaction as the master commits it: the claim (one request here, where a master's pass
-- claims all it can start in one), the build's row and its first properties, worker_preparation,
-- the step's row, the step's state string and its log, each fenced by the build's claim. Left
-- out, as they come before the claim or after the command: the candidates' read, the command's
-- output and the build's end. The first statement is pgbench's own: the next request, and every
-- value the start's statements take as a variable (ROLES in pgbench-start.ts for the ids).
`;

/** pgbench-start.sql from a start's statements and the ids it had; `nowS` the time it ran. */
export function writeScript(
  sent: readonly SentStatement[],
  ids: Readonly<Record<Role, number>>,
  nowS: number,
): string {
  const roleOf = new Map<number, Role>();
  for (const [role, id] of Object.entries(ids) as [Role, number][]) {
    const other = roleOf.get(id);
    if (other) throw new Error(`${role} and ${other} are both ${id}: the recording cannot tell them apart`);
    roleOf.set(id, role);
  }
  const setup = new Map<string, string>(); // variable -> its SQL in the first statement
  const constants = new Map<string, string>(); // a value's text -> its variable
  let others = 0;
  const variable = (value: unknown): string => {
    if (typeof value === 'number' && roleOf.has(value)) {
      const role = roleOf.get(value)!;
      setup.set(role, ROLES[role]);
      return role;
    }
    if (typeof value === 'number' && Math.abs(value - nowS) <= NOW_SLACK_S) {
      setup.set('now', 'extract(epoch FROM now())::int');
      return 'now';
    }
    if (
      Array.isArray(value) &&
      value.length > 0 &&
      value.every((v) => typeof v === 'number' && roleOf.has(v))
    ) {
      const roles = value.map((v) => roleOf.get(v)!);
      const name = `array_${roles.join('_')}`;
      setup.set(name, `ARRAY[${roles.map((r) => ROLES[r]).join(', ')}]`);
      return name;
    }
    const text = valueText(value);
    let name = constants.get(text);
    if (!name) {
      name = /^[a-z][a-z_]{0,40}$/.test(text) ? `t_${text}` : `c${++others}`;
      constants.set(text, name);
      setup.set(name, `'${text.replaceAll("'", "''")}'`);
    }
    return name;
  };
  const body = sent.map(({ text, values }) => {
    const sql = withoutComments(text).replace(/\$(\d+)/g, (_, n: string) => {
      const value = values[Number(n) - 1];
      return value === null || value === undefined ? 'NULL' : `:${variable(value)}`;
    });
    const lines = sql
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    return `${lines.map((l, i) => (i === 0 ? l : `  ${l}`)).join('\n')};`;
  });
  // The variables every statement above takes, one line each, then the request they come from.
  const columns = [...setup].map(([name, expr]) => `  ${expr} AS ${name},`);
  const first = [
    'SELECT',
    ...columns,
    "  set_config('fleet.brid', r.id::text, false) AS brid_setting,",
    "  set_config('fleet.step', (2 * r.id - 1)::text, false) AS step_setting",
    "FROM (SELECT nextval('fleet_next')::int AS id) n JOIN buildrequests r ON r.id = n.id \\gset",
  ].join('\n');
  return `${HEADER}${first}\n${body.join('\n')}\n`;
}

/** A value's text as node-postgres sends it (its prepareValue): arrays as array literals, objects as JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (Array.isArray(value))
    return `{${value
      .map((v) =>
        v === null || v === undefined
          ? 'NULL'
          : `"${valueText(v).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`,
      )
      .join(',')}}`;
  if (typeof value === 'object' && value !== null && !(value instanceof Date) && !Buffer.isBuffer(value))
    return JSON.stringify(value);
  throw new Error(`a value pgbench-start.ts cannot write yet: ${String(value)}`);
}

const withoutComments = (text: string): string => text.replace(/--[^\n]*/g, '');

/** One line, `$1`, `$2`... numbered in the order they appear, as pgbench numbers its variables. */
function canonical(text: string): string {
  let n = 0;
  return text
    .replace(/\$\d+/g, () => `$${++n}`)
    .replace(/\s+/g, ' ')
    .trim();
}

/** A master's statement as pgbench would send it: a null value written NULL, the rest `$n`. */
export function asPgbenchSends({ text, values }: SentStatement): string {
  return canonical(
    withoutComments(text).replace(/\$(\d+)/g, (p, n: string) => {
      const value = values[Number(n) - 1];
      return value === null || value === undefined ? 'NULL' : p;
    }),
  );
}

/**
 * The script's statements as pgbench sends them under -M extended or prepared: each `:name`
 * a `$n` (pgbench's rule: a colon, then a letter or underscore; `::` is a cast), `\gset`
 * and the ending `;` gone, on one line. `setup` is the first, pgbench's own; `start` the rest.
 */
export function readScript(script: string): { setup: string; start: string[] } {
  const commands: string[] = [];
  let current: string[] = [];
  for (const line of script.split('\n')) {
    if (line.trim().startsWith('--') || line.trim() === '') continue;
    const gset = line.indexOf('\\gset');
    const end = gset >= 0 ? gset : line.trimEnd().endsWith(';') ? line.lastIndexOf(';') : -1;
    current.push(end >= 0 ? line.slice(0, end) : line);
    if (end >= 0) {
      commands.push(
        canonical(
          current.join('\n').replace(/:(?::+|([A-Za-z_][A-Za-z0-9_]*))/g, (m, name) => (name ? '$0' : m)),
        ),
      );
      current = [];
    }
  }
  if (current.join('').trim() !== '')
    throw new Error(`${SCRIPT_PATH} ends inside a statement: ${current.join(' ')}`);
  const [setup = '', ...start] = commands;
  return { setup, start };
}
