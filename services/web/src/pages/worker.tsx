// A worker (`#/workers/3`, as Buildbot's): what it says about itself (workerinfo: its admin,
// host, versions), which masters it is connected to, the builders it may run, its builds
// (newest first, paged), and pause / unpause / graceful stop / kill for those the rules allow.
import { getOne, getPage } from '../api.js';
import { BuildsTable } from '../components/builds-table.js';
import { ErrorBox, Loading, Pager, pageOf, Section } from '../components/common.js';
import { useNames } from '../components/names.js';
import { useWorkerActions, WorkerAnswer, WorkerButtons, WorkerState } from '../components/worker-actions.js';
import { useLive, useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Build, Worker } from '../types.js';

const OWN_PAGE = 25;

function infoText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function WorkerPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const workerid = Number(route.params.workerid);
  const page = pageOf(route.query);
  const now = useNow();
  const { config } = useSession();
  const worker = useLive(
    (s) => getOne<Worker>(`workers/${workerid}`, 'workers', {}, s),
    [workerid],
    [`workers/${workerid}/*`],
  );
  const builds = useLive(
    (s) =>
      getPage<Build>(
        `workers/${workerid}/builds`,
        'builds',
        { order: '-buildid', limit: PAGE, offset: page * PAGE },
        s,
      ),
    [workerid, page, PAGE],
    ['builds/*/new', 'builds/*/finished'],
    undefined,
    // Only this worker's builds change its list: with 20 builds running on other workers the
    // page read its builds 9 times in 10 s (load/results/web-pages.md), for nothing.
    (m) => (m as Build).workerid === workerid,
  );
  const actions = useWorkerActions(worker.reload);
  const w = worker.data;
  const builderIds = [...new Set((w?.configured_on ?? []).map((c) => c.builderid))];
  const builderName = useNames('builders', [
    ...builderIds,
    ...(builds.data?.items ?? []).map((b) => b.builderid),
  ]);
  const masterName = useNames(
    'masters',
    (w?.connected_to ?? []).map((c) => c.masterid),
  );
  useTitle(w?.name ?? `Worker ${workerid}`);
  if (worker.error) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>Worker {workerid}</h1>
        <ErrorBox error={worker.error} what={`reading worker ${workerid}`} />
      </main>
    );
  }
  if (!w)
    return (
      <main id="main" tabIndex={-1}>
        <Loading when />
      </main>
    );
  const info = Object.entries(w.workerinfo ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <main id="main" tabIndex={-1}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/workers">Workers</a> /
      </nav>
      <h1>{w.name}</h1>
      <p data-testid="worker-state">
        <WorkerState w={w} />
        {w.connected_to.length > 0 && ` to ${w.connected_to.map((c) => masterName(c.masterid)).join(', ')}`}
      </p>
      <div class="toolbar" data-testid="worker-actions">
        {can(config, 'worker-control') && <WorkerButtons w={w} actions={actions} />}
      </div>
      <WorkerAnswer actions={actions} />
      <div class="grid2">
        <Section title="Worker information" id="w-info">
          {info.length === 0 && <p class="muted">It has said nothing about itself.</p>}
          {info.length > 0 && (
            <table class="props">
              <tbody>
                {info.map(([k, v]) => (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td>
                      <code>{infoText(v)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
        <Section title={`Builders (${builderIds.length})`} id="w-builders">
          {builderIds.length === 0 && <p class="muted">No builder may run on it.</p>}
          <ul class="chips">
            {builderIds.map((id) => (
              <li key={id}>
                <a href={href(`/builders/${id}`)}>{builderName(id)}</a>
              </li>
            ))}
          </ul>
        </Section>
      </div>
      <Section title="Builds" id="w-builds">
        <ErrorBox error={builds.error} what="reading builds" />
        <Loading when={!builds.data && !builds.error} />
        {builds.data && (
          <>
            <BuildsTable builds={builds.data.items} builderName={builderName} now={now} when="started" />
            {builds.data.total === 0 && <p class="muted">No build on it yet.</p>}
            <Pager
              total={builds.data.total}
              page={page}
              size={PAGE}
              label="Builds"
              newest
              link={(p) => href(`/workers/${workerid}`, { page: p || null })}
            />
          </>
        )}
      </Section>
    </main>
  );
}
