// A build: its steps (state, result, duration, URLs, logs), properties with their sources,
// changes, build set and source stamps, data (artifacts), the parent and the triggered
// children; the builder's previous and next builds; stop and rebuild for those the rules allow (a rebuild opens the new build once
// it starts, as a force does).
//
// In at most 10 requests, also with triggered builds (issue 34 §3; 17 before, one read of
// logs per step; Buildbot's UI 53 with 4 triggered builds, buildbot/buildbot#2997): the build
// with its neighbours and every property; its steps; its logs; its request, build set,
// changes and data; its child build sets, their requests and builds (test/web/ui.test.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, apiUrl, getOne, getPage, type Page, rpc } from '../api.js';
import { type BuildWithNeighbours, readBuildWithNeighbours } from '../components/build-neighbours.js';
import { BuildLink, ErrorBox, Loading, Result, Section, WorkerLink } from '../components/common.js';
import { statusOf } from '../components/current-step.js';
import { FollowRequests } from '../components/follow-requests.js';
import { useNames } from '../components/names.js';
import { SourceStamps } from '../components/sourcestamps.js';
import { events } from '../events.js';
import { elapsed, timestamp } from '../format.js';
import { type Live, useLive, useNow } from '../live.js';
import { href, navigate, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { useTitle } from '../title.js';
import {
  type Build,
  type BuildData,
  type BuildRequest,
  type Buildset,
  type Change,
  DELETED,
  type Log,
  type Step,
} from '../types.js';

/** Only web links are followed: a step URL is the build's text, never a script. */
export function safeUrl(url: string): string | null {
  try {
    const u = new URL(url, document.baseURI);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

/** A name the build's properties carry (`buildername`, `workername`), if they carry it. */
function nameOf(b: Build, prop: string): string | undefined {
  const v = b.properties?.[prop]?.[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The logs of one step, from the build's one read of logs. */
function StepLogs({ logs, build, step }: { logs: readonly Log[]; build: Build; step: Step }) {
  return (
    <ul class="plain logs">
      {logs.map((l) => (
        <li key={l.logid}>
          <a
            href={href(
              `/builders/${build.builderid}/builds/${build.number}/steps/${step.number}/logs/${encodeURIComponent(l.slug)}`,
            )}
          >
            {l.name}
          </a>{' '}
          <span class="muted small">
            {l.type === DELETED
              ? 'log deleted by retention'
              : `${l.num_lines.toLocaleString('en')} lines${l.complete ? '' : ', growing'}`}
          </span>
        </li>
      ))}
    </ul>
  );
}

/**
 * Every log of the build in one read (`/builds/{id}/logs`, Flotilla's: Buildbot lists one
 * step's logs per read, which cost a request per step), once its steps are known: read
 * again on the log events of its unfinished steps only, as a finished step's logs are done.
 */
function useBuildLogs(build: Build, steps: readonly Step[] | undefined) {
  const running = (steps ?? []).filter((st) => !st.complete).map((st) => `steps/${st.stepid}/logs/*/*`);
  return useLive(
    (s) =>
      steps
        ? getPage<Log>(`builds/${build.buildid}/logs`, 'logs', { limit: 1000 }, s).then((p) => p.items)
        : Promise.resolve(undefined),
    [build.buildid, steps !== undefined],
    running,
    1000,
  );
}

function Steps({ build, steps, now }: { build: Build; steps: Live<Page<Step> | null>; now: number }) {
  const logs = useBuildLogs(build, steps.data?.items);
  const logsOf = new Map<number, Log[]>();
  for (const l of logs.data ?? []) logsOf.set(l.stepid, [...(logsOf.get(l.stepid) ?? []), l]);
  return (
    <Section title="Steps" id="s-steps">
      <ErrorBox error={steps.error} what="reading steps" />
      <ErrorBox error={logs.error} what="reading logs" />
      <Loading when={!steps.data && !steps.error} />
      <ol class="steps">
        {(steps.data?.items ?? [])
          .filter((st) => !st.hidden)
          .map((st) => (
            <li
              key={st.stepid}
              class={`step r-${st.complete ? (st.results === null ? 'pending' : (['success', 'warnings', 'failure', 'skipped', 'exception', 'retry', 'cancelled'][st.results] ?? 'x')) : st.started_at ? 'running' : 'pending'}`}
              data-testid="step"
            >
              <div class="step-head">
                <span class="step-num">{st.number}</span> <strong>{st.name}</strong>{' '}
                <Result
                  results={st.results}
                  complete={st.complete || !st.started_at}
                  text={!st.started_at && !st.complete ? 'pending' : undefined}
                />{' '}
                <span>{st.state_string}</span>{' '}
                <span class="muted num">{elapsed(st.started_at, st.complete_at, now)}</span>
              </div>
              {st.urls.length > 0 && (
                <ul class="plain urls">
                  {st.urls.map((u) => {
                    const safe = safeUrl(u.url);
                    return (
                      <li key={u.url + u.name}>
                        {safe ? (
                          <a href={safe} rel="noopener noreferrer" target="_blank">
                            {u.name}
                          </a>
                        ) : (
                          <span>
                            {u.name}: {u.url}
                          </span>
                        )}
                      </li>
                    );
                  })}
                </ul>
              )}
              <StepLogs logs={logsOf.get(st.stepid) ?? []} build={build} step={st} />
            </li>
          ))}
      </ol>
    </Section>
  );
}

/** The build's properties with their sources, as its own read brought them (`property=*`). */
function Properties({ build }: { build: Build }) {
  const props = Object.entries(build.properties ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <Section title="Properties" id="s-props">
      <table class="props">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {props.map(([name, [value, source]]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>
                <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
              </td>
              <td class="muted">{source}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

/** As Buildbot's UI counts them: whoever asked for the build (the `owner` and `owners`
 * properties) and the authors of its changes, each once, in that order. */
function responsibleUsers(build: Build, changes: Change[]): string[] {
  const props = build.properties ?? {};
  const owners = [props.owner?.[0], ...(Array.isArray(props.owners?.[0]) ? props.owners[0] : [])];
  const names = [...owners, ...changes.map((c) => c.author)].filter(
    (n): n is string => typeof n === 'string' && n !== '',
  );
  return [...new Set(names)];
}

/** The builds this one triggered: its child build sets' requests' builds (three reads, in
 * the query language; Buildbot's UI read each triggered build request and its builds one by
 * one from the trigger step's URLs: 53 requests for 4 triggered builds, buildbot/buildbot#2997).
 * Each carries its builder's name (the `buildername` property), which needs no read of names. */
async function triggered(buildid: number, s: AbortSignal): Promise<Build[]> {
  const children = await getPage<Buildset>(
    'buildsets',
    'buildsets',
    { parent_buildid: buildid, limit: 50, field: ['bsid', 'parent_buildid'] },
    s,
  );
  if (!children.items.length) return [];
  const reqs = await getPage<BuildRequest>(
    'buildrequests',
    'buildrequests',
    {
      buildsetid__in: children.items.map((c) => c.bsid),
      limit: 100,
      field: ['buildrequestid', 'buildsetid'],
    },
    s,
  );
  if (!reqs.items.length) return [];
  const kids = await getPage<Build>(
    'builds',
    'builds',
    { buildrequestid__in: reqs.items.map((r) => r.buildrequestid), limit: 100, property: 'buildername' },
    s,
  );
  return kids.items;
}

function Origin({ build }: { build: Build }) {
  const bsidRef = useRef<number | undefined>(undefined);
  const origin = useLive(
    async (s) => {
      // Four independent chains at once: the page waits for the longest, not their sum.
      const [[br, bs], changes, kids, data] = await Promise.all([
        getOne<BuildRequest>(`buildrequests/${build.buildrequestid}`, 'buildrequests', {}, s).then(
          async (br) =>
            [br, await getOne<Buildset>(`buildsets/${br.buildsetid}`, 'buildsets', {}, s)] as const,
        ),
        getPage<Change>(`builds/${build.buildid}/changes`, 'changes', { limit: 50 }, s),
        triggered(build.buildid, s),
        getPage<BuildData>(`builds/${build.buildid}/data`, 'build_data', { limit: 50 }, s),
      ]);
      return { br, bs, changes: changes.items, kids, data: data.items };
    },
    [build.buildid],
    // A running build's steps may trigger builds; a build set's events matter for its own
    // and its children's only (20 running builds elsewhere made this page read all again).
    [...(build.complete ? [] : [`builds/${build.buildid}/steps/*/*`]), 'buildsets/*/*'],
    undefined,
    (m) => {
      const e = m as { stepid?: number; bsid?: number; parent_buildid?: number | null };
      return e.stepid !== undefined || e.parent_buildid === build.buildid || e.bsid === bsidRef.current;
    },
  );
  bsidRef.current = origin.data?.bs.bsid;
  const builderName = useNames(
    'builders',
    (origin.data?.kids ?? []).filter((k) => !nameOf(k, 'buildername')).map((k) => k.builderid),
  );
  if (origin.error) return <ErrorBox error={origin.error} what="reading the build set" />;
  const o = origin.data;
  if (!o) return <Loading when />;
  const responsible = responsibleUsers(build, o.changes);
  return (
    <>
      <Section title="Build set" id="s-bs">
        <p data-testid="responsible">
          Responsible users:{' '}
          {responsible.length ? responsible.join(', ') : <span class="muted">none known</span>}
        </p>
        <p>
          <a href={href(`/buildrequests/${o.br.buildrequestid}`)}>Build request {o.br.buildrequestid}</a>,
          build set {o.bs.bsid}: {o.bs.reason}, submitted {timestamp(o.bs.submitted_at)}
          {o.bs.parent_buildid !== null && (
            <>
              {' '}
              — triggered by{' '}
              <a href={href(`/builds/${o.bs.parent_buildid}`)}>parent build {o.bs.parent_buildid}</a>
            </>
          )}
        </p>
        <SourceStamps stamps={o.bs.sourcestamps} />
      </Section>
      {o.kids.length > 0 && (
        <Section title="Triggered builds" id="s-kids">
          <ul class="plain">
            {o.kids.map((k) => (
              <li key={k.buildid}>
                <BuildLink b={k} builderName={nameOf(k, 'buildername') ?? builderName(k.builderid)} />{' '}
                <Result results={k.results} complete={k.complete} />
              </li>
            ))}
          </ul>
        </Section>
      )}
      <Section title={`Changes (${o.changes.length})`} id="s-changes">
        {o.changes.length === 0 && <p class="muted">No change: this build was not caused by a commit.</p>}
        <ul class="plain">
          {o.changes.map((c) => (
            <li key={c.changeid}>
              <strong>{c.author}</strong> {c.revision && <code>{c.revision.slice(0, 12)}</code>}{' '}
              {c.comments.split('\n')[0]}
            </li>
          ))}
        </ul>
      </Section>
      {o.data.length > 0 && (
        <Section title="Data" id="s-data">
          <ul class="plain">
            {o.data.map((d) => (
              <li key={d.name}>
                <a href={apiUrl(`builds/${build.buildid}/data/${encodeURIComponent(d.name)}/value`)} download>
                  {d.name}
                </a>{' '}
                <span class="muted">
                  ({d.length.toLocaleString('en')} bytes, from {d.source})
                </span>
              </li>
            ))}
          </ul>
        </Section>
      )}
    </>
  );
}

export function BuildPage({ route }: { route: Route }) {
  const now = useNow();
  const { config } = useSession();
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [rebuilt, setRebuilt] = useState<number[] | null>(null);
  const byId = route.name === 'buildById';
  const path = byId
    ? `builds/${route.params.buildid}`
    : `builders/${route.params.builderid}/builds/${route.params.number}`;
  // By number: the build with its neighbours in one read, kept current by the build's own
  // events and, while no next build is known, by the builder's new builds.
  const nextKnown = useRef(false);
  const build = useLive(
    (s): Promise<BuildWithNeighbours> =>
      byId
        ? getOne<Build>(path, 'builds', { property: '*' }, s).then((b) => ({
            build: b,
            prev: null,
            next: null,
          }))
        : readBuildWithNeighbours(route.params.builderid!, Number(route.params.number), s),
    [path],
    byId
      ? [`builds/${route.params.buildid}/*`]
      : [
          `builders/${route.params.builderid}/builds/${route.params.number}/*`,
          `builders/${route.params.builderid}/builds/*/new`,
        ],
    undefined,
    (m) => (m as Build).number === Number(route.params.number) || !nextKnown.current,
  );
  const b = build.data?.build;
  nextKnown.current = build.data?.next != null;
  useEffect(() => {
    // /builds/<id> is a link form (a parent build): shown at its canonical address.
    if (byId && b) navigate(href(`/builders/${b.builderid}/builds/${b.number}`), true);
  }, [byId, b?.buildid]);
  useEffect(
    // Properties ride on the build's read: a change of them reads it again.
    () => (b ? events.subscribe(`builds/${b.buildid}/properties/update`, () => build.reload()) : undefined),
    [b?.buildid],
  );
  // The steps, read once for the list and the header's current step (a running build's first
  // unfinished one): no read of its own for either.
  const steps = useLive(
    (s) =>
      b
        ? getPage<Step>(`builds/${b.buildid}/steps`, 'steps', { order: 'number', limit: 500 }, s)
        : Promise.resolve(null),
    [b?.buildid],
    b ? [`builds/${b.buildid}/steps/*/*`] : [],
  );
  const step = steps.data?.items.find((st) => !st.complete) ?? null;
  const around = { prev: build.data?.prev ?? null, next: build.data?.next ?? null };
  // Names from the build's own properties (its master sets both when it starts); read by id
  // only for a build that lacks them.
  const builderName = useNames('builders', b && !nameOf(b, 'buildername') ? [b.builderid] : []);
  const workerName = useNames('workers', b && !nameOf(b, 'workername') ? [b.workerid] : []);
  const builderLabel = b ? (nameOf(b, 'buildername') ?? builderName(b.builderid)) : '';
  const workerLabel = b ? (nameOf(b, 'workername') ?? workerName(b.workerid)) : '';
  useTitle(b ? `${builderLabel} #${b.number}` : 'Build');
  if (build.error) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>Build</h1>
        <ErrorBox error={build.error} what="reading the build" />
      </main>
    );
  }
  if (!b)
    return (
      <main id="main" tabIndex={-1}>
        <Loading when />
      </main>
    );
  const act = async (method: 'stop' | 'rebuild') => {
    setActionError(null);
    setBusy(true);
    try {
      const result = await rpc(
        `builds/${b.buildid}`,
        method,
        method === 'stop' ? { reason: 'stopped from the web UI' } : {},
      );
      if (method === 'rebuild') {
        const brids = Object.values((result as [number, Record<string, number>])[1] ?? {});
        if (brids[0]) setRebuilt(brids);
      }
      build.reload();
    } catch (err) {
      setActionError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" tabIndex={-1}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/builders">Builders</a> / <a href={href(`/builders/${b.builderid}`)}>{builderLabel}</a> /
      </nav>
      <nav class="pager prevnext" aria-label="Builds of this builder">
        {around.prev != null ? (
          <a href={href(`/builders/${b.builderid}/builds/${around.prev}`)} rel="prev">
            ← Previous build (#{around.prev})
          </a>
        ) : (
          <span class="muted">← Previous build</span>
        )}
        {around.next != null ? (
          <a href={href(`/builders/${b.builderid}/builds/${around.next}`)} rel="next">
            Next build (#{around.next}) →
          </a>
        ) : (
          <span class="muted">Next build →</span>
        )}
      </nav>
      <h1>
        {builderLabel} #{b.number} <Result results={b.results} complete={b.complete} />
      </h1>
      <p data-testid="build-state">
        {statusOf(b, step)} — worker <WorkerLink workerid={b.workerid} name={workerLabel} />, started{' '}
        {timestamp(b.started_at)}, {b.complete ? 'took' : 'running for'}{' '}
        <span class="num">{elapsed(b.started_at, b.complete_at, now)}</span>
      </p>
      <div class="toolbar" data-testid="build-actions" data-ready={config ? 'yes' : undefined}>
        {!b.complete && can(config, 'stop') && (
          <button type="button" class="danger" disabled={busy} onClick={() => act('stop')}>
            Stop
          </button>
        )}
        {b.complete && can(config, 'rebuild') && (
          <button type="button" disabled={busy} onClick={() => act('rebuild')}>
            Rebuild
          </button>
        )}
      </div>
      <ErrorBox error={actionError} what="acting on the build" />
      {rebuilt && <FollowRequests builderid={b.builderid} brids={rebuilt} open />}
      <Steps build={b} steps={steps} now={now} />
      <div class="grid2">
        <Properties build={b} />
        <div>
          <Origin build={b} />
        </div>
      </div>
    </main>
  );
}
