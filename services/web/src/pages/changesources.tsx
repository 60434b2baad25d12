// Change sources (`#/changesources`, as Buildbot's): each poller or hook the configuration
// declares, and the master that runs it now (a source runs on one master at a time; none
// while no master has claimed it).
import { getPage } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { ChangeSource } from '../types.js';

const OWN_PAGE = 50;

export function ChangeSourcesPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const page = pageOf(route.query);
  useTitle('Change sources');
  const list = useLive(
    (s) =>
      getPage<ChangeSource>(
        'changesources',
        'changesources',
        { order: ['name'], limit: PAGE, offset: page * PAGE },
        s,
      ),
    [page, PAGE],
    ['changesources/*/*', 'masters/*/*'],
    1000,
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>Change sources</h1>
      <ErrorBox error={list.error} what="reading change sources" />
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Change source</th>
                <th scope="col">Master</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((c) => (
                <tr key={c.changesourceid}>
                  <th scope="row">{c.name}</th>
                  <td>{c.master ? c.master.name : <span class="muted">not running</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.total === 0 && <p class="muted">No change source is configured.</p>}
          <Pager
            total={list.data.total}
            page={page}
            size={PAGE}
            label="Change sources"
            link={(p) => href('/changesources', { page: p || null })}
          />
        </>
      )}
    </main>
  );
}
