// Workers: which masters each is connected to, what it runs now, and pause / unpause /
// graceful stop / kill for those the rules allow. An action is Buildbot's JSON-RPC call on
// the worker; the API's answer (accepted, or its error) is said on the page, and what the
// master then does (paused, stopping, gone) shows as the worker's state changes, live.
import { getPage } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useNames } from '../components/names.js';
import { useWorkerActions, WorkerAnswer, WorkerButtons, WorkerState } from '../components/worker-actions.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { useTitle } from '../title.js';
import type { Build, Worker } from '../types.js';

const PAGE = 50;

export function WorkersPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const { config } = useSession();
  useTitle('Workers');
  const workers = useLive(
    (s) => getPage<Worker>('workers', 'workers', { order: 'name', limit: PAGE, offset: page * PAGE }, s),
    [page],
    ['workers/*/*'],
  );
  const ids = (workers.data?.items ?? []).map((w) => w.workerid);
  const running = useLive(
    (s) =>
      ids.length
        ? getPage<Build>(
            'builds',
            'builds',
            { complete: false, workerid__in: ids, limit: 200, order: '-buildid' },
            s,
          )
        : Promise.resolve({ items: [] as Build[], total: 0 }),
    [ids.join(',')],
    ['builds/*/new', 'builds/*/finished'],
  );
  const masterName = useNames(
    'masters',
    (workers.data?.items ?? []).flatMap((w) => w.connected_to.map((c) => c.masterid)),
  );
  const builderName = useNames(
    'builders',
    (running.data?.items ?? []).map((b) => b.builderid),
  );
  const control = can(config, 'worker-control');
  const actions = useWorkerActions(workers.reload);
  return (
    <main id="main" tabIndex={-1}>
      <h1>Workers</h1>
      <ErrorBox error={workers.error} what="reading workers" />
      <WorkerAnswer actions={actions} />
      <Loading when={!workers.data && !workers.error} />
      {workers.data && (
        <>
          <table class="dense">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">State</th>
                <th scope="col">Connected to</th>
                <th scope="col">Running</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {workers.data.items.map((w) => {
                const mine = (running.data?.items ?? []).filter((b) => b.workerid === w.workerid);
                return (
                  <tr key={w.workerid}>
                    <th scope="row">
                      <a href={href(`/workers/${w.workerid}`)}>{w.name}</a>
                    </th>
                    <td>
                      <WorkerState w={w} />
                    </td>
                    <td>{w.connected_to.map((c) => masterName(c.masterid)).join(', ')}</td>
                    <td>
                      {mine.map((b) => (
                        <a
                          key={b.buildid}
                          class="chip"
                          href={href(`/builders/${b.builderid}/builds/${b.number}`)}
                        >
                          {builderName(b.builderid)} #{b.number}
                        </a>
                      ))}
                    </td>
                    <td class="actions">{control && <WorkerButtons w={w} actions={actions} />}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Pager
            total={workers.data.total}
            page={page}
            size={PAGE}
            label="Workers"
            link={(p) => href('/workers', { page: p || null })}
          />
        </>
      )}
    </main>
  );
}
