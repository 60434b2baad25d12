// One change (`#/changes/12`, as Buildbot's): who, when, where, its comments and files in
// full, and the builds it caused, live.
import { getOne } from '../api.js';
import { useBuildsOfChanges } from '../components/change-builds.js';
import { CARD_BUILDS, ChangeCard } from '../components/change-card.js';
import { ErrorBox, Loading } from '../components/common.js';
import { useLive } from '../live.js';
import type { Route } from '../router.js';
import { useTitle } from '../title.js';
import type { Change } from '../types.js';

export function ChangePage({ route }: { route: Route }) {
  const id = Number(route.params.changeid);
  const change = useLive((s) => getOne<Change>(`changes/${id}`, 'changes', {}, s), [id]);
  const c = change.data;
  const builds = useBuildsOfChanges([id], CARD_BUILDS);
  useTitle(c ? `Change ${id}: ${c.comments.split('\n', 1)[0]}` : `Change ${id}`);
  return (
    <main id="main" tabIndex={-1}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/changes">Changes</a> /
      </nav>
      <h1>Change {id}</h1>
      <ErrorBox error={change.error} what={`reading change ${id}`} />
      <ErrorBox error={builds.error} what={`reading the builds of change ${id}`} />
      <Loading when={!c && !change.error} />
      {c && (
        <section class="card" aria-label={`Change ${id}`}>
          <ChangeCard c={c} builds={builds.data?.get(id)} filesOpen />
        </section>
      )}
    </main>
  );
}
