// Masters (`#/masters`, as Buildbot's): every master that ever ran, active ones first, each
// with when it was last seen and how many workers are configured on it (counted by the API:
// `masters/<id>/workers` with limit 1 reads meta.total, never the list).
import { getPage } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { timestamp } from '../format.js';
import { useLive, useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { timeText, usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Master } from '../types.js';

const OWN_PAGE = 50;

export function MastersPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const page = pageOf(route.query);
  const now = useNow(30_000);
  useTitle('Masters');
  const list = useLive(
    async (s) => {
      const p = await getPage<Master>(
        'masters',
        'masters',
        { order: ['-active', 'name'], limit: PAGE, offset: page * PAGE },
        s,
      );
      const workers = await Promise.all(
        p.items.map((m) =>
          getPage(`masters/${m.masterid}/workers`, 'workers', { limit: 1, field: ['workerid'] }, s)
            .then((w) => w.total)
            .catch(() => null),
        ),
      );
      return { ...p, workers };
    },
    [page, PAGE],
    ['masters/*/*', 'workers/*/*'],
    1000,
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>Masters</h1>
      <ErrorBox error={list.error} what="reading masters" />
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Master</th>
                <th scope="col">State</th>
                <th scope="col">Last seen</th>
                <th scope="col">Workers configured</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((m, i) => (
                <tr key={m.masterid}>
                  <th scope="row">{m.name}</th>
                  <td>
                    <span class={`state ${m.active ? 'on' : 'off'}`}>{m.active ? 'active' : 'inactive'}</span>
                  </td>
                  <td title={timestamp(m.last_active)}>{timeText(m.last_active, now)}</td>
                  <td class="num">{list.data!.workers[i] ?? '?'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.total === 0 && <p class="muted">No master has run yet.</p>}
          <Pager
            total={list.data.total}
            page={page}
            size={PAGE}
            label="Masters"
            link={(p) => href('/masters', { page: p || null })}
          />
        </>
      )}
    </main>
  );
}
