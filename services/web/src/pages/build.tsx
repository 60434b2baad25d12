// A build: its steps (state, result, duration, URLs, logs), properties with their sources,
// changes, build set and source stamps, data (artifacts), the parent and the triggered
// children; the builder's previous and next builds; stop and rebuild for those the rules allow (a rebuild opens the new build once
// it starts, as a force does).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiUrl, getOne, getPage, rpc } from '../api.js';
import { BuildLink, ErrorBox, Loading, Result, Section, WorkerLink } from '../components/common.js';
import { currentStep, statusOf } from '../components/current-step.js';
import { FollowRequests } from '../components/follow-requests.js';
import { useNames } from '../components/names.js';
import { SourceStamps } from '../components/sourcestamps.js';
import { elapsed, timestamp } from '../format.js';
import { useLive, useNow } from '../live.js';
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

function StepLogs({ step, build }: { step: Step; build: Build }) {
  const logs = useLive(
    (s) => getPage<Log>(`steps/${step.stepid}/logs`, 'logs', { limit: 50 }, s),
    [step.stepid],
    [`steps/${step.stepid}/logs/*/*`],
    1000,
  );
  if (logs.error) return <ErrorBox error={logs.error} what="reading logs" />;
  return (
    <ul class="plain logs">
      {(logs.data?.items ?? []).map((l) => (
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

function Steps({ build, now }: { build: Build; now: number }) {
  const steps = useLive(
    (s) => getPage<Step>(`builds/${build.buildid}/steps`, 'steps', { order: 'number', limit: 500 }, s),
    [build.buildid],
    [`builds/${build.buildid}/steps/*/*`],
  );
  return (
    <Section title="Steps" id="s-steps">
      <ErrorBox error={steps.error} what="reading steps" />
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
              <StepLogs step={st} build={build} />
            </li>
          ))}
      </ol>
    </Section>
  );
}

function Properties({ buildid }: { buildid: number }) {
  const props = useLive(
    async (s) => {
      const body = await getOne<Record<string, [unknown, string]>>(
        `builds/${buildid}/properties`,
        'properties',
        {},
        s,
      );
      return Object.entries(body).sort(([a], [b]) => a.localeCompare(b));
    },
    [buildid],
    [`builds/${buildid}/properties/update`, `builds/${buildid}/*`],
  );
  return (
    <Section title="Properties" id="s-props">
      <ErrorBox error={props.error} what="reading properties" />
      {props.data && (
        <table class="props">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {props.data.map(([name, [value, source]]) => (
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
      )}
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

function Origin({ build }: { build: Build }) {
  const origin = useLive(
    async (s) => {
      const br = await getOne<BuildRequest>(`buildrequests/${build.buildrequestid}`, 'buildrequests', {}, s);
      const bs = await getOne<Buildset>(`buildsets/${br.buildsetid}`, 'buildsets', {}, s);
      const changes = await getPage<Change>(`builds/${build.buildid}/changes`, 'changes', { limit: 50 }, s);
      const children = await getPage<Buildset>(
        'buildsets',
        'buildsets',
        { parent_buildid: build.buildid, limit: 50, field: ['bsid', 'parent_buildid'] },
        s,
      );
      let kids: Build[] = [];
      if (children.items.length) {
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
        if (reqs.items.length) {
          kids = (
            await getPage<Build>(
              'builds',
              'builds',
              { buildrequestid__in: reqs.items.map((r) => r.buildrequestid), limit: 100 },
              s,
            )
          ).items;
        }
      }
      const data = await getPage<BuildData>(`builds/${build.buildid}/data`, 'build_data', { limit: 50 }, s);
      return { br, bs, changes: changes.items, kids, data: data.items };
    },
    [build.buildid],
    [`builds/${build.buildid}/steps/*/*`, `buildsets/*/*`],
  );
  const builderName = useNames(
    'builders',
    (origin.data?.kids ?? []).map((k) => k.builderid),
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
                <BuildLink b={k} builderName={builderName(k.builderid)} />{' '}
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
  const build = useLive(
    // The owner properties ride on the build's own read (responsible users, no extra request).
    (s) => getOne<Build>(path, 'builds', { property: ['owner', 'owners'] }, s),
    [path],
    [
      byId
        ? `builds/${route.params.buildid}/*`
        : `builders/${route.params.builderid}/builds/${route.params.number}/*`,
    ],
  );
  const b = build.data;
  useEffect(() => {
    // /builds/<id> is a link form (a parent build): shown at its canonical address.
    if (byId && b) navigate(href(`/builders/${b.builderid}/builds/${b.number}`), true);
  }, [byId, b?.buildid]);
  const step = useLive(
    (s) => (b && !b.complete ? currentStep(b.buildid, s) : Promise.resolve(null)),
    [b?.buildid, b?.complete],
    b && !b.complete ? [`builds/${b.buildid}/steps/*/*`] : [],
    1000,
  );
  const around = useLive(
    async (s) => {
      if (!b) return null;
      const one = (q: Record<string, string | number>) =>
        getPage<Pick<Build, 'number'>>(
          `builders/${b.builderid}/builds`,
          'builds',
          { ...q, limit: 1, field: 'number' },
          s,
        ).then((p) => p.items[0]?.number ?? null);
      const [prev, next] = await Promise.all([
        one({ number__lt: b.number, order: '-number' }),
        one({ number__gt: b.number, order: 'number' }),
      ]);
      return { prev, next };
    },
    [b?.builderid, b?.number],
    b ? [`builders/${b.builderid}/builds/*/new`] : [],
  );
  const builderName = useNames('builders', [b?.builderid]);
  const workerName = useNames('workers', [b?.workerid]);
  useTitle(b ? `${builderName(b.builderid)} #${b.number}` : 'Build');
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
        <a href="#/builders">Builders</a> /{' '}
        <a href={href(`/builders/${b.builderid}`)}>{builderName(b.builderid)}</a> /
      </nav>
      <nav class="pager prevnext" aria-label="Builds of this builder">
        {around.data?.prev != null ? (
          <a href={href(`/builders/${b.builderid}/builds/${around.data.prev}`)} rel="prev">
            ← Previous build (#{around.data.prev})
          </a>
        ) : (
          <span class="muted">← Previous build</span>
        )}
        {around.data?.next != null ? (
          <a href={href(`/builders/${b.builderid}/builds/${around.data.next}`)} rel="next">
            Next build (#{around.data.next}) →
          </a>
        ) : (
          <span class="muted">Next build →</span>
        )}
      </nav>
      <h1>
        {builderName(b.builderid)} #{b.number} <Result results={b.results} complete={b.complete} />
      </h1>
      <p data-testid="build-state">
        {statusOf(b, step.data)} — worker <WorkerLink workerid={b.workerid} name={workerName(b.workerid)} />,
        started {timestamp(b.started_at)}, {b.complete ? 'took' : 'running for'}{' '}
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
      <Steps build={b} now={now} />
      <div class="grid2">
        <Properties buildid={b.buildid} />
        <div>
          <Origin build={b} />
        </div>
      </div>
    </main>
  );
}
