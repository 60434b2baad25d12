// A builder: its builds (paged by offset/limit), its pending requests (cancel), and a force
// button per force scheduler that builds it. After a force, the page follows the request
// and opens its build as soon as one starts.
import { useState } from 'preact/hooks';
import type { ForceSchedulerSpec } from '../../../core/api-shapes.js';
import { type ApiError, getOne, getPage, rpc } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf, Result, Section, WorkerLink } from '../components/common.js';
import { statusOf, useCurrentSteps } from '../components/current-step.js';
import { FollowRequests } from '../components/follow-requests.js';
import { ForceDialog } from '../components/force-dialog.js';
import { useNames } from '../components/names.js';
import { elapsed } from '../format.js';
import { useLive, useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { timeText, usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Build, Builder, BuildRequest } from '../types.js';

const OWN_PAGE = 25;

export function BuilderPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const builderid = Number(route.params.builderid);
  const page = pageOf(route.query);
  const now = useNow();
  const { config } = useSession();
  const [forcing, setForcing] = useState<ForceSchedulerSpec | null>(null);
  const [forced, setForced] = useState<number[] | null>(null);
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const builder = useLive(
    (s) => getOne<Builder>(`builders/${builderid}`, 'builders', {}, s),
    [builderid],
    [`builders/${builderid}/*`],
  );
  const builds = useLive(
    (s) =>
      getPage<Build>(
        `builders/${builderid}/builds`,
        'builds',
        { order: '-number', limit: PAGE, offset: page * PAGE },
        s,
      ),
    [builderid, page, PAGE],
    [`builders/${builderid}/builds/*/*`],
  );
  const pending = useLive(
    (s) =>
      getPage<BuildRequest>(
        `builders/${builderid}/buildrequests`,
        'buildrequests',
        { claimed: false, complete: false, order: '-buildrequestid', limit: PAGE },
        s,
      ),
    [builderid],
    ['buildrequests/*/*'],
  );
  const schedulers = useLive(
    (s) =>
      getPage<ForceSchedulerSpec>(
        `builders/${builderid}/forceschedulers`,
        'forceschedulers',
        { limit: 20 },
        s,
      ),
    [builderid],
  );
  const steps = useCurrentSteps(builds.data?.items);
  useTitle(builder.data?.name ?? `Builder ${builderid}`);
  const workerName = useNames(
    'workers',
    (builds.data?.items ?? []).map((b) => b.workerid),
  );
  if (builder.error) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>Builder {builderid}</h1>
        <ErrorBox error={builder.error} what={`reading builder ${builderid}`} />
      </main>
    );
  }
  const b = builder.data;
  // Until the builder is known, its lists say nothing (a missing builder is one error).
  if (!b)
    return (
      <main id="main" tabIndex={-1}>
        <Loading when />
      </main>
    );
  const mayForce = can(config, 'force');
  return (
    <main id="main" tabIndex={-1}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/builders">Builders</a> /
      </nav>
      <h1>{b.name}</h1>
      {b.description && <p>{b.description}</p>}
      {b.tags.length > 0 && (
        <p>
          {b.tags.map((t) => (
            <a key={t} class="tag" href={href('/builders', { tag: t })}>
              {t}
            </a>
          ))}
        </p>
      )}
      <div
        class="toolbar"
        data-testid="force-buttons"
        data-ready={schedulers.data && config ? 'yes' : undefined}
      >
        {mayForce &&
          (schedulers.data?.items ?? []).map((f) => (
            <button type="button" class="primary" key={f.name} onClick={() => setForcing(f)}>
              {f.button_name || f.name}…
            </button>
          ))}
      </div>
      <ErrorBox error={schedulers.error} what="reading force schedulers" />
      {forcing && (
        <ForceDialog
          scheduler={forcing}
          builderid={builderid}
          onClose={() => setForcing(null)}
          onForced={(brids) => {
            setForcing(null);
            setForced(brids);
          }}
        />
      )}
      {forced && forced.length > 0 && <FollowRequests builderid={builderid} brids={forced} open />}
      <ErrorBox error={actionError} what="cancelling a request" />
      <Section title={`Pending requests${pending.data ? ` (${pending.data.total})` : ''}`} id="b-pending">
        <ErrorBox error={pending.error} what="reading pending requests" />
        {pending.data && pending.data.items.length === 0 && <p class="muted">No request waits.</p>}
        {pending.data && pending.data.items.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Priority</th>
                <th scope="col">Waiting</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {pending.data.items.map((r) => (
                <tr key={r.buildrequestid}>
                  <td>{r.buildrequestid}</td>
                  <td>{r.priority}</td>
                  <td>{elapsed(r.submitted_at, null, now)}</td>
                  <td>
                    {can(config, 'cancel') && (
                      <button
                        type="button"
                        onClick={async () => {
                          setActionError(null);
                          try {
                            await rpc(`buildrequests/${r.buildrequestid}`, 'cancel', {
                              reason: 'cancelled from the web UI',
                            });
                            pending.reload();
                          } catch (err) {
                            setActionError(err as ApiError);
                          }
                        }}
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Builds" id="b-builds">
        <ErrorBox error={builds.error} what="reading builds" />
        <Loading when={!builds.data && !builds.error} />
        {builds.data && (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Result</th>
                  <th scope="col">Status</th>
                  <th scope="col">Worker</th>
                  <th scope="col">Started</th>
                  <th scope="col">Took</th>
                </tr>
              </thead>
              <tbody>
                {builds.data.items.map((x) => (
                  <tr key={x.buildid}>
                    <td>
                      <a href={href(`/builders/${builderid}/builds/${x.number}`)}>#{x.number}</a>
                    </td>
                    <td>
                      <Result results={x.results} complete={x.complete} />
                    </td>
                    <td>{statusOf(x, steps.get(x.buildid))}</td>
                    <td>
                      <WorkerLink workerid={x.workerid} name={workerName(x.workerid)} />
                    </td>
                    <td>{timeText(x.started_at, now)}</td>
                    <td class="num">{elapsed(x.started_at, x.complete_at, now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {builds.data.total === 0 && <p class="muted">No build yet.</p>}
            <Pager
              total={builds.data.total}
              page={page}
              size={PAGE}
              label="Builds"
              newest
              link={(p) => href(`/builders/${builderid}`, { page: p || null })}
            />
          </>
        )}
      </Section>
    </main>
  );
}
