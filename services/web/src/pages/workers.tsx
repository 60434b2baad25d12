// Workers: which masters each is connected to, what it runs now, and pause / unpause /
// graceful stop / kill for those the rules allow.
import { useState } from 'preact/hooks';
import { type ApiError, getPage, rpc } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useNames } from '../components/names.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import type { Build, Worker } from '../types.js';

const PAGE = 50;

export function WorkersPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const { config } = useSession();
  const [actionError, setActionError] = useState<ApiError | null>(null);
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
  const act = async (w: Worker, method: string) => {
    setActionError(null);
    try {
      await rpc(`workers/${w.workerid}`, method, { reason: `${method} from the web UI` });
      workers.reload();
    } catch (err) {
      setActionError(err as ApiError);
    }
  };
  return (
    <main id="main" tabIndex={-1}>
      <h1>Workers</h1>
      <ErrorBox error={workers.error} what="reading workers" />
      <ErrorBox error={actionError} what="acting on a worker" />
      <Loading when={!workers.data && !workers.error} />
      {workers.data && (
        <>
          <table>
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
                const online = w.connected_to.length > 0;
                return (
                  <tr key={w.workerid}>
                    <th scope="row">{w.name}</th>
                    <td>
                      <span class={`state ${online ? 'on' : 'off'}`}>{online ? 'connected' : 'offline'}</span>
                      {w.paused && ' paused'}
                      {w.graceful && ' stopping'}
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
                    <td class="actions">
                      {control && online && (
                        <>
                          {w.paused ? (
                            <button type="button" onClick={() => act(w, 'unpause')}>
                              Unpause
                            </button>
                          ) : (
                            <button type="button" onClick={() => act(w, 'pause')}>
                              Pause
                            </button>
                          )}{' '}
                          <button
                            type="button"
                            onClick={() => act(w, 'stop')}
                            title="Stop after its running builds"
                          >
                            Graceful stop
                          </button>
                        </>
                      )}
                    </td>
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
