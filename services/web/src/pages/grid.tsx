// Grid: builders down, the most recent changes across, each cell the builds that change
// caused on that builder (Buildbot's grid view). One read for the changes, one for their
// builds (components/change-builds.ts), one paged read for the builders. Someone
// the rules may let force builds gets each builder's force buttons in its row (the same
// dialog as the builder page); the grid stays on screen and links the build once it starts.
import { useState } from 'preact/hooks';
import type { ForceSchedulerSpec } from '../../../core/api-shapes.js';
import { getPage } from '../api.js';
import { BuilderPager, useBuilderColumns } from '../components/builder-columns.js';
import { CellBuilds, useChangeBuilds } from '../components/change-builds.js';
import { ErrorBox, Loading, pageOf } from '../components/common.js';
import { FollowRequests } from '../components/follow-requests.js';
import { ForceDialog } from '../components/force-dialog.js';
import { timestamp } from '../format.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { useTitle } from '../title.js';
import type { Builder } from '../types.js';

const CHANGES = 12;
const BUILDERS = 25;
/** Force schedulers read at most: more than a configuration has. */
const FORCE_SCHEDULERS = 200;

interface Forcing {
  builder: Builder;
  scheduler: ForceSchedulerSpec;
}

export function GridPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const tag = route.query.get('tag') ?? '';
  useTitle('Grid');
  const { config } = useSession();
  const mayForce = can(config, 'force');
  const [forcing, setForcing] = useState<Forcing | null>(null);
  const [forced, setForced] = useState<{ builder: Builder; brids: number[] } | null>(null);
  const builders = useBuilderColumns(tag, page, BUILDERS);
  const data = useChangeBuilds(CHANGES, 0, builders.data?.items.map((b) => b.builderid) ?? null);
  // The force schedulers of the builders on screen, only for someone who may force: all of
  // them in one read (a configuration has a handful; each names its builders), not one read
  // per builder shown (25 more requests on a page of 25 builders: 28 in all on the
  // many-builders set, load/results/web-pages.md).
  // Each answer says which builders it is for: the buttons are complete once it matches.
  const shownBuilders = builders.data?.items ?? [];
  const key = `${mayForce}:${shownBuilders.map((b) => b.builderid).join(',')}`;
  const schedulers = useLive(
    async (s) => {
      const all = mayForce
        ? (
            await getPage<ForceSchedulerSpec>(
              'forceschedulers',
              'forceschedulers',
              { limit: FORCE_SCHEDULERS },
              s,
            )
          ).items
        : [];
      return {
        key,
        byBuilder: new Map(
          shownBuilders.map((b) => [b.builderid, all.filter((f) => f.builder_names.includes(b.name))]),
        ),
      };
    },
    [key],
  );
  const buttonsReady = !!config && !!builders.data && schedulers.data?.key === key;
  return (
    <main id="main" tabIndex={-1}>
      <h1>Grid</h1>
      <p class="muted">Builders down, the latest {CHANGES} changes across (newest first).</p>
      <ErrorBox error={data.error} what="reading changes and their builds" />
      <ErrorBox error={builders.error} what="reading builders" />
      <ErrorBox error={schedulers.error} what="reading force schedulers" />
      {forcing && (
        <ForceDialog
          scheduler={forcing.scheduler}
          builderid={forcing.builder.builderid}
          onClose={() => setForcing(null)}
          onForced={(brids) => {
            setForced({ builder: forcing.builder, brids });
            setForcing(null);
          }}
        />
      )}
      {forced && forced.brids.length > 0 && (
        <FollowRequests
          key={forced.brids[0]}
          builderid={forced.builder.builderid}
          brids={forced.brids}
          builderName={forced.builder.name}
          open={false}
        />
      )}
      <Loading when={!data.data || !builders.data} />
      {data.data && builders.data && (
        <>
          {data.data.changes.length === 0 && (
            <p class="muted">No change yet: builds forced by hand do not show here.</p>
          )}
          <div class="scroll-x">
            <table class="grid" data-testid="grid" data-ready={buttonsReady ? 'yes' : undefined}>
              <thead>
                <tr>
                  <th scope="col">Builder</th>
                  {data.data.changes.map((c) => (
                    <th
                      scope="col"
                      key={c.changeid}
                      title={`${c.author}\n${timestamp(c.when_timestamp)}\n${c.comments}`}
                    >
                      <div class="small">{c.revision ? c.revision.slice(0, 8) : `change ${c.changeid}`}</div>
                      <div class="muted small">{c.author.replace(/\s*<.*>$/, '')}</div>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {builders.data.items.map((b) => (
                  <tr key={b.builderid}>
                    <th scope="row">
                      <a href={href(`/builders/${b.builderid}`)}>{b.name}</a>
                      {mayForce &&
                        (schedulers.data?.byBuilder.get(b.builderid) ?? []).map((f) => (
                          <button
                            type="button"
                            class="small force"
                            key={f.name}
                            aria-label={`${f.button_name || f.name}… on ${b.name}`}
                            onClick={() => setForcing({ builder: b, scheduler: f })}
                          >
                            {f.button_name || f.name}…
                          </button>
                        ))}
                    </th>
                    {data.data!.builds.map((list, i) => (
                      <td key={data.data!.changes[i]!.changeid} class="boxes">
                        <CellBuilds list={list} builderid={b.builderid} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <BuilderPager path="/grid" tag={tag} page={page} size={BUILDERS} total={builders.data.total} />
        </>
      )}
    </main>
  );
}
