// Build requests (`#/buildrequests`, as Buildbot's): every request newest first, or only
// those still waiting (`?pending=1`: neither claimed nor complete, what "Pending" means on
// Home), each with its builder, build set, state and age; one paged read, kept live.
import { getPage } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf, Result } from '../components/common.js';
import { useNames } from '../components/names.js';
import { useLive, useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { timeText, usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { BuildRequest } from '../types.js';

const OWN_PAGE = 50;

/** A request's state: its result once complete, else claimed (a build runs it) or pending. */
export function RequestState({ r }: { r: BuildRequest }) {
  if (r.complete) return <Result results={r.results} />;
  return <Result results={null} complete={!r.claimed} text={r.claimed ? 'claimed' : 'pending'} />;
}

export function BuildRequestsPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const page = pageOf(route.query);
  const pending = route.query.get('pending') === '1';
  const now = useNow(30_000);
  useTitle(pending ? 'Pending build requests' : 'Build requests');
  const list = useLive(
    (s) =>
      getPage<BuildRequest>(
        'buildrequests',
        'buildrequests',
        {
          order: '-buildrequestid',
          limit: PAGE,
          offset: page * PAGE,
          claimed: pending ? false : undefined,
          complete: pending ? false : undefined,
        },
        s,
      ),
    [page, pending, PAGE],
    ['buildrequests/*/*'],
  );
  const builderName = useNames(
    'builders',
    (list.data?.items ?? []).map((r) => r.builderid),
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>{pending ? 'Pending build requests' : 'Build requests'}</h1>
      <p>
        {pending ? (
          <a href="#/buildrequests">All requests</a>
        ) : (
          <a href={href('/buildrequests', { pending: 1 })}>Only pending requests</a>
        )}
      </p>
      <ErrorBox error={list.error} what="reading build requests" />
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table class="dense">
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Builder</th>
                <th scope="col">State</th>
                <th scope="col">Build set</th>
                <th scope="col">Priority</th>
                <th scope="col">Submitted</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.buildrequestid}>
                  <th scope="row">
                    <a href={href(`/buildrequests/${r.buildrequestid}`)}>{r.buildrequestid}</a>
                  </th>
                  <td>
                    <a href={href(`/builders/${r.builderid}`)}>{builderName(r.builderid)}</a>
                  </td>
                  <td>
                    <RequestState r={r} />
                  </td>
                  <td class="num">{r.buildsetid}</td>
                  <td class="num">{r.priority}</td>
                  <td>{timeText(r.submitted_at, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.total === 0 && <p class="muted">{pending ? 'No request waits.' : 'No request yet.'}</p>}
          <Pager
            total={list.data.total}
            page={page}
            size={PAGE}
            label="Requests"
            newest
            link={(p) => href('/buildrequests', { pending: pending ? 1 : null, page: p || null })}
          />
        </>
      )}
    </main>
  );
}
