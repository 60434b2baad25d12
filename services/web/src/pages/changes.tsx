// Changes, newest first (the recent-changes query the contract names): author, comments,
// files, revision (linked where the change has a revlink), and the builds each caused; each
// links its own page (`#/changes/12`). Two reads: the page of changes, then their builds
// (useBuildsOfChanges).
import { getPage } from '../api.js';
import { useBuildsOfChanges } from '../components/change-builds.js';
import { CARD_BUILDS, ChangeCard } from '../components/change-card.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Change } from '../types.js';

const OWN_PAGE = 25;

export function ChangesPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const page = pageOf(route.query);
  useTitle('Changes');
  const changes = useLive(
    (s) => getPage<Change>('changes', 'changes', { order: '-changeid', limit: PAGE, offset: page * PAGE }, s),
    [page, PAGE],
    ['changes/*/*'],
  );
  const builds = useBuildsOfChanges(changes.data?.items.map((c) => c.changeid) ?? [], CARD_BUILDS);
  return (
    <main id="main" tabIndex={-1}>
      <h1>Changes</h1>
      <ErrorBox error={changes.error} what="reading changes" />
      <ErrorBox error={builds.error} what="reading the builds of these changes" />
      <Loading when={!changes.data && !changes.error} />
      {changes.data && (
        <>
          {changes.data.items.length === 0 && <p class="muted">No change yet.</p>}
          <ol class="changes plain">
            {changes.data.items.map((c) => (
              <li key={c.changeid} class="card">
                <ChangeCard c={c} builds={builds.data?.get(c.changeid)} />
              </li>
            ))}
          </ol>
          <Pager
            total={changes.data.total}
            page={page}
            size={PAGE}
            label="Changes"
            newest
            link={(p) => href('/changes', { page: p || null })}
          />
        </>
      )}
    </main>
  );
}
