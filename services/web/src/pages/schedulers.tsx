// Schedulers (`#/schedulers`, as Buildbot's): each with the master that runs it and whether
// it is enabled, and the enable / disable toggle for those the rules allow: Buildbot's
// JSON-RPC `enable` on the scheduler ({enabled: true|false}). The master that owns it hears
// the change and stops or starts it; the row shows what the API then says, live.
import { useState } from 'preact/hooks';
import { ApiError, getPage, rpc } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Scheduler } from '../types.js';

const OWN_PAGE = 50;

export function SchedulersPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const page = pageOf(route.query);
  const { config } = useSession();
  useTitle('Schedulers');
  const [busy, setBusy] = useState<number | null>(null);
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const list = useLive(
    (s) =>
      getPage<Scheduler>('schedulers', 'schedulers', { order: 'name', limit: PAGE, offset: page * PAGE }, s),
    [page, PAGE],
    ['schedulers/*/*'],
  );
  const toggle = async (sc: Scheduler) => {
    setActionError(null);
    setBusy(sc.schedulerid);
    try {
      await rpc(`schedulers/${sc.schedulerid}`, 'enable', { enabled: !sc.enabled });
      list.reload();
    } catch (err) {
      setActionError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(null);
    }
  };
  const mayToggle = can(config, 'enable-scheduler');
  return (
    <main id="main" tabIndex={-1}>
      <h1>Schedulers</h1>
      <ErrorBox error={list.error} what="reading schedulers" />
      <ErrorBox error={actionError} what="enabling or disabling a scheduler" />
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Scheduler</th>
                <th scope="col">Enabled</th>
                <th scope="col">Master</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((sc) => (
                <tr key={sc.schedulerid}>
                  <th scope="row">{sc.name}</th>
                  <td>
                    {mayToggle ? (
                      <label>
                        <input
                          type="checkbox"
                          checked={sc.enabled}
                          disabled={busy !== null}
                          onChange={() => toggle(sc)}
                        />{' '}
                        <span class="sr-only">{sc.name} </span>
                        {sc.enabled ? 'enabled' : 'disabled'}
                      </label>
                    ) : sc.enabled ? (
                      'enabled'
                    ) : (
                      'disabled'
                    )}
                  </td>
                  <td>{sc.master ? sc.master.name : <span class="muted">none runs it</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.total === 0 && <p class="muted">No scheduler.</p>}
          <Pager
            total={list.data.total}
            page={page}
            size={PAGE}
            label="Schedulers"
            link={(p) => href('/schedulers', { page: p || null })}
          />
        </>
      )}
    </main>
  );
}
