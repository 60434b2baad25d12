// Builders, as Buildbot's builders page: a builder per line with its last builds as coloured
// boxes (links to them), its tags and its workers (online ones as links, offline muted);
// filtered by tag and name in the API's query (tags__contains, name__contains), paged. The
// page costs a fixed number of reads whatever its size: the builders, their last builds
// (components/last-builds.ts: one to three), the workers (components/builder-workers.ts: one
// per 500 of them) — not two per row as before (51 reads for 25 builders).
// Grouped by project (Buildbot 4.3), those without one first, as the API orders them: the
// projects' names are one more read.
import { useState } from 'preact/hooks';
import { getPage } from '../api.js';
import { allWorkers } from '../components/builder-workers.js';
import { BuildBox, ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { lastBuilds } from '../components/last-builds.js';
import { useLive } from '../live.js';
import { href, navigate, type Route } from '../router.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Build, Builder, Project, Worker } from '../types.js';

const OWN_PAGE = 50;
const LAST_BUILDS = 12;
const SHOWN_WORKERS = 4;

function BuilderRow({
  b,
  tag,
  builds,
  workers,
}: {
  b: Builder;
  tag: string;
  builds: Build[] | undefined;
  workers: Worker[] | undefined;
}) {
  const online = (workers ?? []).filter((w) => w.connected_to.length > 0);
  return (
    <tr>
      <th scope="row">
        <a href={href(`/builders/${b.builderid}`)}>{b.name}</a>
        {b.description && <span class="muted small"> {b.description}</span>}
      </th>
      <td class="boxes">
        {[...(builds ?? [])].reverse().map((x) => (
          <BuildBox
            key={x.buildid}
            builderid={b.builderid}
            number={x.number}
            results={x.results}
            complete={x.complete}
          />
        ))}
      </td>
      <td>
        {b.tags.map((t) => (
          <a
            key={t}
            class={`tag${t === tag ? ' on' : ''}`}
            href={href('/builders', { tag: t === tag ? null : t })}
          >
            {t}
          </a>
        ))}
      </td>
      <td class="small">
        {workers &&
          (workers.length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <span title={`${online.length} of ${workers.length} online`}>
              {workers.slice(0, SHOWN_WORKERS).map((w, i) => (
                <span key={w.workerid}>
                  {i > 0 && ', '}
                  <a
                    class={w.connected_to.length > 0 ? 'online' : 'offline'}
                    href={href(`/workers/${w.workerid}`)}
                  >
                    {w.name}
                  </a>
                </span>
              ))}
              {workers.length > SHOWN_WORKERS && ` +${workers.length - SHOWN_WORKERS}`}
            </span>
          ))}
      </td>
    </tr>
  );
}

export function BuildersPage({ route }: { route: Route }) {
  const PAGE = usePageSize(OWN_PAGE);
  const tag = route.query.get('tag') ?? '';
  const name = route.query.get('name') ?? '';
  const page = pageOf(route.query);
  const [typed, setTyped] = useState(name);
  useTitle(tag ? `Builders tagged ${tag}` : 'Builders');
  const list = useLive(
    (s) =>
      getPage<Builder>(
        'builders',
        'builders',
        {
          order: ['projectid', 'name'],
          limit: PAGE,
          offset: page * PAGE,
          tags__contains: tag || undefined,
          name__contains: name || undefined,
        },
        s,
      ),
    [tag, name, page, PAGE],
    ['builders/*/*'],
  );
  const ids = (list.data?.items ?? []).map((b) => b.builderid);
  // The boxes: a few reads for all the rows (components/last-builds.ts), read again at most
  // every two seconds while builds start and finish.
  const builds = useLive(
    (s) => lastBuilds(ids, LAST_BUILDS, s),
    [ids.join(',')],
    ['builds/*/new', 'builds/*/finished'],
    2000,
  );
  const workers = useLive(allWorkers, [], ['workers/*/*']);
  const workersOf = (builderid: number) =>
    workers.data?.filter((w) => w.configured_on.some((c) => c.builderid === builderid));
  // A configuration has a handful of projects: their names, read whole.
  const projects = useLive((s) => getPage<Project>('projects', 'projects', { limit: 200 }, s), [], []);
  const projectName = (id: number | null) =>
    id === null
      ? 'No project'
      : (projects.data?.items.find((p) => p.projectid === id)?.name ?? `project ${id}`);
  const groups: [number | null, Builder[]][] = [];
  for (const b of list.data?.items ?? []) {
    const last = groups.at(-1);
    const pid = b.projectid ?? null;
    if (last && last[0] === pid) last[1].push(b);
    else groups.push([pid, [b]]);
  }
  const grouped = groups.some(([pid]) => pid !== null);
  return (
    <main id="main" tabIndex={-1}>
      <h1>Builders</h1>
      <search>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            navigate(href('/builders', { tag, name: typed }));
          }}
        >
          <label>
            Name contains{' '}
            <input
              type="search"
              value={typed}
              onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <button type="submit">Filter</button>
          {tag && (
            <span>
              {' '}
              Tag <strong>{tag}</strong> <a href={href('/builders', { name })}>(any tag)</a>
            </span>
          )}
        </form>
      </search>
      <ErrorBox error={list.error} what="reading builders" />
      <ErrorBox error={builds.error} what="reading the last builds" />
      <ErrorBox error={workers.error} what="reading workers" />
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table class="builders dense">
            <thead>
              <tr>
                <th scope="col">Builder</th>
                <th scope="col">Last builds</th>
                <th scope="col">Tags</th>
                <th scope="col">Workers</th>
              </tr>
            </thead>
            {groups.map(([pid, builders]) => (
              <tbody key={pid ?? 'none'}>
                {grouped && (
                  <tr class="group">
                    <th scope="colgroup" colSpan={4}>
                      {projectName(pid)}
                    </th>
                  </tr>
                )}
                {builders.map((b) => (
                  <BuilderRow
                    key={b.builderid}
                    b={b}
                    tag={tag}
                    builds={builds.data?.get(b.builderid)}
                    workers={workersOf(b.builderid)}
                  />
                ))}
              </tbody>
            ))}
          </table>
          {list.data.items.length === 0 && <p class="muted">No builder matches.</p>}
          <Pager
            total={list.data.total}
            page={page}
            size={PAGE}
            label="Builders"
            link={(p) => href('/builders', { tag, name, page: p || null })}
          />
        </>
      )}
    </main>
  );
}
