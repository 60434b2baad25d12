// Changes, newest first (the recent-changes query the contract names): author, comments,
// files, revision (linked where the change has a revlink), and the builds each caused.
import { getPage } from '../api.js';
import { ErrorBox, Loading, Pager, pageOf, Result } from '../components/common.js';
import { useNames } from '../components/names.js';
import { timestamp } from '../format.js';
import { useLive } from '../live.js';
import { href, type Route } from '../router.js';
import { useTitle } from '../title.js';
import type { Build, Change } from '../types.js';
import { safeUrl } from './build.js';

const PAGE = 25;

function ChangeBuilds({ changeid }: { changeid: number }) {
  const builds = useLive(
    (s) => getPage<Build>(`changes/${changeid}/builds`, 'builds', { limit: 20 }, s),
    [changeid],
    ['builds/*/new', 'builds/*/finished'],
  );
  const builderName = useNames(
    'builders',
    (builds.data?.items ?? []).map((b) => b.builderid),
  );
  if (builds.error) return <ErrorBox error={builds.error} />;
  return (
    <>
      {(builds.data?.items ?? []).map((b) => (
        <a key={b.buildid} class="chip" href={href(`/builders/${b.builderid}/builds/${b.number}`)}>
          {builderName(b.builderid)} #{b.number} <Result results={b.results} complete={b.complete} />
        </a>
      ))}
    </>
  );
}

export function ChangesPage({ route }: { route: Route }) {
  const page = pageOf(route.query);
  useTitle('Changes');
  const changes = useLive(
    (s) => getPage<Change>('changes', 'changes', { order: '-changeid', limit: PAGE, offset: page * PAGE }, s),
    [page],
    ['changes/*/*'],
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>Changes</h1>
      <ErrorBox error={changes.error} what="reading changes" />
      <Loading when={!changes.data && !changes.error} />
      {changes.data && (
        <>
          {changes.data.items.length === 0 && <p class="muted">No change yet.</p>}
          <ol class="changes plain">
            {changes.data.items.map((c) => {
              const link = c.revlink ? safeUrl(c.revlink) : null;
              return (
                <li key={c.changeid} class="card">
                  <div>
                    <strong>{c.author}</strong> <span class="muted">{timestamp(c.when_timestamp)}</span>
                    {c.branch && (
                      <>
                        {' '}
                        on <code>{c.branch}</code>
                      </>
                    )}{' '}
                    {c.revision &&
                      (link ? (
                        <a href={link} rel="noopener noreferrer" target="_blank">
                          <code>{c.revision.slice(0, 12)}</code>
                        </a>
                      ) : (
                        <code>{c.revision.slice(0, 12)}</code>
                      ))}
                    {c.repository && <span class="muted small"> {c.repository}</span>}
                  </div>
                  <pre class="comments">{c.comments}</pre>
                  {c.files.length > 0 && (
                    <details>
                      <summary>{c.files.length === 1 ? '1 file' : `${c.files.length} files`}</summary>
                      <ul class="files">
                        {c.files.map((f) => (
                          <li key={f}>
                            <code>{f}</code>
                          </li>
                        ))}
                      </ul>
                    </details>
                  )}
                  <div class="caused">
                    <ChangeBuilds changeid={c.changeid} />
                  </div>
                </li>
              );
            })}
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
