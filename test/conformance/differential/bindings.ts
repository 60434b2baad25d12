// Path parameters for every endpoint pattern, taken from what a real Buildbot serves: each
// tuple binds one entity and its ancestors (a log, its step, build and builder), so a path
// like builders/i:buildername/builds/n:build_number/steps/i:step_name/logs/i:log_slug names a
// row that exists. A few tuples name nothing (999999, `nosuch`), for the not-found paths.

type Row = Record<string, unknown>;
export type Tuple = Record<string, number | string>;

async function list(base: string, path: string): Promise<Row[]> {
  const res = await fetch(`${base}/${path}`, { headers: { Accept: 'application/json' } });
  if (res.status !== 200) return [];
  const body = (await res.json()) as Record<string, unknown>;
  const key = Object.keys(body).find((k) => k !== 'meta');
  return key ? (body[key] as Row[]) : [];
}

/** Up to n rows spread evenly over the list (first, last and between). */
function spread<T>(rows: readonly T[], n: number): T[] {
  if (rows.length <= n) return [...rows];
  return Array.from({ length: n }, (_, i) => rows[Math.round((i * (rows.length - 1)) / (n - 1))]!);
}

export interface Bindings {
  /** Tuples by the kind of entity a pattern's last parameter names. */
  byLeaf: Map<string, Tuple[]>;
}

export async function discover(base: string, perKind = 4): Promise<Bindings> {
  const builders = await list(base, 'builders');
  const builderName = new Map(builders.map((b) => [b.builderid as number, b.name as string]));
  const builds = spread(await list(base, 'builds'), perKind * 2);
  const buildTuple = (b: Row): Tuple => ({
    buildid: b.buildid as number,
    number: b.number as number,
    build_number: b.number as number,
    builderid: b.builderid as number,
    buildername: builderName.get(b.builderid as number) ?? 'nosuch',
    masterid: b.masterid as number,
    workerid: b.workerid as number,
    buildrequestid: b.buildrequestid as number,
  });

  const stepTuples: Tuple[] = [];
  const logTuples: Tuple[] = [];
  for (const b of spread(builds, perKind)) {
    const steps = await list(base, `builds/${b.buildid}/steps`);
    for (const s of spread(steps, 3)) {
      const st: Tuple = {
        ...buildTuple(b),
        stepid: s.stepid as number,
        step_name: s.name as string,
        step_number: s.number as number,
      };
      stepTuples.push(st);
      for (const l of await list(base, `steps/${s.stepid}/logs`)) {
        logTuples.push({ ...st, logid: l.logid as number, log_slug: l.slug as string });
      }
    }
  }

  const workers = await list(base, 'workers');
  const workerTuples: Tuple[] = [];
  for (const w of workers) {
    const on = (w.configured_on as Row[]) ?? [];
    const base_: Tuple = { workerid: w.workerid as number, name: w.name as string };
    if (on.length === 0) workerTuples.push({ ...base_, masterid: 1, builderid: 1 });
    for (const c of on.slice(0, 2)) {
      workerTuples.push({ ...base_, masterid: c.masterid as number, builderid: c.builderid as number });
    }
  }

  const changes = spread(await list(base, 'changes'), perKind);
  const changeTuples: Tuple[] = changes.map((c) => ({
    changeid: c.changeid as number,
    ssid: (c.sourcestamp as Row).ssid as number,
  }));
  // A build that has changes, for builds/n:buildid/changes and changes/n:changeid/builds.
  for (const c of changes) {
    const bs = await list(base, `changes/${c.changeid}/builds`);
    if (bs[0]) changeTuples.push({ changeid: c.changeid as number, ...buildTuple(bs[0]) });
  }

  const masters = await list(base, 'masters');
  const one = <T>(rows: Row[], f: (r: Row) => T) => spread(rows, perKind).map(f);
  const byLeaf = new Map<string, Tuple[]>([
    ['builds', [...builds.map(buildTuple), ...changeTuples.filter((t) => 'buildid' in t)]],
    ['steps', stepTuples],
    ['logs', logTuples],
    [
      'builders',
      builders.map((b) => ({
        builderid: b.builderid as number,
        buildername: b.name as string,
        masterid: ((b.masterids as number[]) ?? [])[0] ?? 1,
      })),
    ],
    ['workers', workerTuples],
    ['masters', masters.map((m) => ({ masterid: m.masterid as number, builderid: 1 }))],
    ['changes', changeTuples],
    ['sourcestamps', one(await list(base, 'sourcestamps'), (s) => ({ ssid: s.ssid as number }))],
    ['buildsets', one(await list(base, 'buildsets'), (s) => ({ bsid: s.bsid as number }))],
    [
      'buildrequests',
      one(await list(base, 'buildrequests'), (r) => ({
        buildrequestid: r.buildrequestid as number,
        builderid: r.builderid as number,
      })),
    ],
    [
      'schedulers',
      (await list(base, 'schedulers')).map((s) => ({
        schedulerid: s.schedulerid as number,
        masterid: ((s.master as Row | null)?.masterid as number) ?? 1,
      })),
    ],
    [
      'changesources',
      (await list(base, 'changesources')).map((s) => ({
        changesourceid: s.changesourceid as number,
        masterid: ((s.master as Row | null)?.masterid as number) ?? 1,
      })),
    ],
    [
      'forceschedulers',
      (await list(base, 'forceschedulers')).map((s) => ({
        schedulername: s.name as string,
        builderid: builders.find((b) => (s.builder_names as string[]).includes(b.name as string))
          ?.builderid as number,
      })),
    ],
  ]);
  // Build data and test results: none in the fixture, but the paths still resolve.
  byLeaf.set(
    'data',
    spread(builds, 2).map((b) => ({ ...buildTuple(b), name: 'nosuch' })),
  );
  byLeaf.set('test_result_sets', [{ test_result_setid: 1, builderid: 1, buildid: 1, stepid: 1 }]);
  // Not found: every parameter names nothing.
  const missing: Tuple = {};
  for (const tuples of byLeaf.values()) {
    for (const t of tuples) {
      for (const [k, v] of Object.entries(t)) missing[k] = typeof v === 'number' ? 999999 : 'nosuch';
    }
  }
  byLeaf.set('missing', [missing]);
  return { byLeaf };
}

/** The kind of entity a pattern's last parameter (or last literal) names. */
export function leafOf(pattern: string): string {
  const parts = pattern.split('/');
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i]!;
    if (p.includes(':')) continue;
    if (['contents', 'raw', 'value', 'properties', 'property_list', 'properties_list'].includes(p)) {
      continue;
    }
    return p === 'results' ? 'test_result_sets' : p;
  }
  return '';
}

export function bind(pattern: string, t: Tuple): string | null {
  const out: string[] = [];
  for (const part of pattern.split('/')) {
    const m = /^(n|i|s)?:([a-z0-9_.]+)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    const v = t[m[2]!];
    if (v === undefined) return null;
    out.push(encodeURIComponent(String(v)));
  }
  return out.join('/');
}
