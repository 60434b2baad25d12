// Builders: each with its tags, its last builds as coloured boxes and its workers online;
// filtered by tag and name in the API's query (tags__contains, name__contains), paged; grouped
// by project (Buildbot 4.3), those without one first, as the API orders them.
import { useState } from 'preact/hooks';
import { getPage } from '../api.js';
import { BuildBox, ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { useLive } from '../live.js';
import { href, navigate, type Route } from '../router.js';
import { usePageSize } from '../settings.js';
import { useTitle } from '../title.js';
import type { Build, Builder, Project, Worker } from '../types.js';

const OWN_PAGE = 25;
const LAST_BUILDS = 10;

function BuilderRow({ b, tag }: { b: Builder; tag: string }) {
  const builds = useLive(
    (s) =>
      getPage<Build>(
        `builders/${b.builderid}/builds`,
        'builds',
        {
          order: '-number',
          limit: LAST_BUILDS,
          field: ['buildid', 'number', 'builderid', 'results', 'complete'],
        },
        s,
      ),
    [b.builderid],
    [`builders/${b.builderid}/builds/*/*`],
  );
  const workers = useLive(
    (s) =>
      getPage<Worker>(
        `builders/${b.builderid}/workers`,
        'workers',
        { limit: 50, field: ['workerid', 'name', 'connected_to'] },
        s,
      ),
    [b.builderid],
    ['workers/*/*'],
  );
  const online = (workers.data?.items ?? []).filter((w) => w.connected_to.length > 0);
  return (
    <tr>
      <th scope="row">
        <a href={href(`/builders/${b.builderid}`)}>{b.name}</a>
        {b.description && <div class="muted small">{b.description}</div>}
      </th>
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
      <td class="boxes">
        {builds.error && <ErrorBox error={builds.error} />}
        {[...(builds.data?.items ?? [])].reverse().map((x) => (
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
        {workers.data && (
          <span title={online.map((w) => w.name).join(', ')}>
            {online.length} of {workers.data.total} online
          </span>
        )}
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
      <Loading when={!list.data && !list.error} />
      {list.data && (
        <>
          <table class="builders">
            <thead>
              <tr>
                <th scope="col">Builder</th>
                <th scope="col">Tags</th>
                <th scope="col">Last builds</th>
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
                  <BuilderRow key={b.builderid} b={b} tag={tag} />
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
