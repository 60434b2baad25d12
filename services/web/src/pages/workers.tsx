// Workers: which masters each is connected to, what it runs now, and pause / unpause /
// graceful stop / kill for those the rules allow. An action is Buildbot's JSON-RPC call on
// the worker; the API's answer (accepted, or its error) is said on the page, and what the
// master then does (paused, stopping, gone) shows as the worker's state changes, live.
import { useState } from 'preact/hooks';
import { ApiError, getPage, rpc } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useNames } from '../components/names.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { useTitle } from '../title.js';
import type { Build, Worker } from '../types.js';

const PAGE = 50;

type Method = 'pause' | 'unpause' | 'stop' | 'kill';

const DONE: Record<Method, string> = {
  pause: 'pause accepted: no new builds start on it',
  unpause: 'unpause accepted: builds may start on it again',
  stop: 'graceful stop accepted: it disconnects once its running builds are done',
  kill: 'kill accepted: its master disconnects it now, running builds and all',
};

export function WorkersPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const { config } = useSession();
  useTitle('Workers');
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const [answer, setAnswer] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
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
  const act = async (w: Worker, method: Method) => {
    if (method === 'kill' && !confirm(`Kill ${w.name}? Its running builds end at once.`)) return;
    setActionError(null);
    setAnswer(null);
    setBusy(true);
    try {
      await rpc(`workers/${w.workerid}`, method, { reason: `${method} from the web UI` });
      setAnswer(`${w.name}: ${DONE[method]}.`);
      workers.reload();
    } catch (err) {
      setActionError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" tabIndex={-1}>
      <h1>Workers</h1>
      <ErrorBox error={workers.error} what="reading workers" />
      <ErrorBox error={actionError} what="acting on a worker" />
      {answer && (
        <p class="notice" role="status" data-testid="worker-answer">
          {answer}
        </p>
      )}
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
                            <button type="button" disabled={busy} onClick={() => act(w, 'unpause')}>
                              Unpause
                            </button>
                          ) : (
                            <button type="button" disabled={busy} onClick={() => act(w, 'pause')}>
                              Pause
                            </button>
                          )}{' '}
                          <button
                            type="button"
                            disabled={busy || w.graceful}
                            onClick={() => act(w, 'stop')}
                            title="Stop after its running builds"
                          >
                            Graceful stop
                          </button>{' '}
                          <button
                            type="button"
                            class="danger"
                            disabled={busy}
                            onClick={() => act(w, 'kill')}
                            title="Disconnect it now, ending its running builds"
                          >
                            Kill
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
