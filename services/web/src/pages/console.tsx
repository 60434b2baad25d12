// Console: the latest changes down, builders across, each cell the builds that change caused
// on that builder (Buildbot's console view: what did my commit break, and where). Both axes
// page by offset/limit, changes newest first (`page`) and builders by name (`bpage`, with an
// optional `tag`), so a large installation is read a screen at a time, never whole.
import { useBuilderColumns } from '../components/builder-columns.js';
import { CellBuilds, useChangeBuilds } from '../components/change-builds.js';
import { ErrorBox, Loading, Pager, pageOf } from '../components/common.js';
import { timestamp } from '../format.js';
import { useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { timeText } from '../settings.js';
import { useTitle } from '../title.js';
import type { Change } from '../types.js';
import { safeUrl } from './build.js';

const CHANGES = 20;
const BUILDERS = 30;

function ChangeHeader({ c, now }: { c: Change; now: number }) {
  const link = c.revlink ? safeUrl(c.revlink) : null;
  const rev = c.revision ? c.revision.slice(0, 8) : `change ${c.changeid}`;
  const subject = c.comments.split('\n', 1)[0] ?? '';
  return (
    <th scope="row" class="change" title={`${c.author}\n${timestamp(c.when_timestamp)}\n\n${c.comments}`}>
      {link ? (
        <a href={link} rel="noopener noreferrer" target="_blank">
          <code>{rev}</code>
        </a>
      ) : (
        <code>{rev}</code>
      )}{' '}
      <span class="muted small">
        {c.author.replace(/\s*<.*>$/, '')}, {timeText(c.when_timestamp, now)}
        {c.branch ? ` on ${c.branch}` : ''}
      </span>
      <div class="subject">{subject}</div>
    </th>
  );
}

export function ConsolePage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  const bpage = pageOf(route.query, 'bpage');
  const tag = route.query.get('tag') ?? '';
  const now = useNow(30_000);
  useTitle(tag ? `Console, builders tagged ${tag}` : 'Console');
  const builders = useBuilderColumns(tag, bpage, BUILDERS, ['builderid', 'name', 'tags']);
  const data = useChangeBuilds(CHANGES, page * CHANGES, builders.data?.items.map((b) => b.builderid) ?? null);
  const link = (q: { page?: number; bpage?: number }) =>
    href('/console', {
      tag,
      page: (q.page ?? page) || null,
      bpage: (q.bpage ?? bpage) || null,
    });
  const d = data.data;
  const bs = builders.data;
  return (
    <main id="main" tabIndex={-1}>
      <h1>Console</h1>
      <p class="muted">
        The latest changes down (newest first), builders across
        {tag ? (
          <>
            {' '}
            tagged <span class="tag">{tag}</span> (<a href={href('/console')}>all builders</a>)
          </>
        ) : (
          ''
        )}
        : each cell holds the builds the change caused on the builder.
      </p>
      <ErrorBox error={data.error} what="reading changes and their builds" />
      <ErrorBox error={builders.error} what="reading builders" />
      <Loading when={(!d && !data.error) || (!bs && !builders.error)} />
      {d && bs && (
        <>
          {d.total === 0 && <p class="muted">No change yet: builds forced by hand do not show here.</p>}
          <div class="scroll-x">
            <table class="grid console" data-testid="console">
              <thead>
                <tr>
                  <th scope="col">Change</th>
                  {bs.items.map((b) => (
                    <th scope="col" key={b.builderid} class="builder">
                      <a href={href(`/builders/${b.builderid}`)}>{b.name}</a>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {d.changes.map((c, i) => (
                  <tr key={c.changeid}>
                    <ChangeHeader c={c} now={now} />
                    {bs.items.map((b) => (
                      <td key={b.builderid} class="boxes">
                        <CellBuilds list={d.builds[i]!} builderid={b.builderid} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            total={d.total}
            page={page}
            size={CHANGES}
            label="Changes"
            shown
            newest
            link={(p) => link({ page: p })}
          />
          <Pager
            total={bs.total}
            page={bpage}
            size={BUILDERS}
            label="Builders"
            shown
            link={(p) => link({ bpage: p })}
          />
        </>
      )}
    </main>
  );
}
