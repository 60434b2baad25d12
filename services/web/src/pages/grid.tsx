// Grid: builders down, the most recent changes across, each cell the builds that change
// caused on that builder (Buildbot's grid view). One read for the changes, one per change
// for its builds, one paged read for the builders.
import { getPage } from '../api.js';
import { BuildBox, ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { timestamp } from '../format.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { useTitle } from '../title.js';
import type { Build, Builder, Change } from '../types.js';

const CHANGES = 12;
const BUILDERS = 25;

export function GridPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const tag = route.query.get('tag') ?? '';
  useTitle('Grid');
  const data = useLive(
    async (s) => {
      const changes = (await getPage<Change>('changes', 'changes', { order: '-changeid', limit: CHANGES }, s))
        .items;
      const builds = await Promise.all(
        changes.map((c) =>
          getPage<Build>(
            `changes/${c.changeid}/builds`,
            'builds',
            { limit: 50, field: ['buildid', 'number', 'builderid', 'results', 'complete'] },
            s,
          ).then((p) => p.items),
        ),
      );
      return { changes, builds };
    },
    [],
    ['changes/*/*', 'builds/*/new', 'builds/*/finished'],
  );
  const builders = useLive(
    (s) =>
      getPage<Builder>(
        'builders',
        'builders',
        { order: 'name', limit: BUILDERS, offset: page * BUILDERS, tags__contains: tag || undefined },
        s,
      ),
    [page, tag],
    ['builders/*/*'],
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>Grid</h1>
      <p class="muted">Builders down, the latest {CHANGES} changes across (newest first).</p>
      <ErrorBox error={data.error} what="reading changes and their builds" />
      <ErrorBox error={builders.error} what="reading builders" />
      <Loading when={!data.data || !builders.data} />
      {data.data && builders.data && (
        <>
          {data.data.changes.length === 0 && (
            <p class="muted">No change yet: builds forced by hand do not show here.</p>
          )}
          <div class="scroll-x">
            <table class="grid">
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
                    </th>
                    {data.data!.builds.map((list, i) => (
                      <td key={data.data!.changes[i]!.changeid} class="boxes">
                        {list
                          .filter((x) => x.builderid === b.builderid)
                          .map((x) => (
                            <BuildBox
                              key={x.buildid}
                              builderid={x.builderid}
                              number={x.number}
                              results={x.results}
                              complete={x.complete}
                            />
                          ))}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            total={builders.data.total}
            page={page}
            size={BUILDERS}
            label="Builders"
            link={(p) => href('/grid', { tag, page: p || null })}
          />
        </>
      )}
    </main>
  );
}
