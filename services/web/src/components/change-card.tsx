// One change as the changes list and a change's page show it: author, time, branch, revision
// (linked where the change has a web revlink), repository, comments, files, and the builds
// it caused (live: a build that starts for it appears).
import { getPage, type Page } from '../api.js';
import { timestamp } from '../format.js';
import { type Live, useLive } from '../live.js';
import { safeUrl } from '../pages/build.js';
import { href } from '../router.js';
import type { Build, Change } from '../types.js';
import { ErrorBox, Result } from './common.js';
import { useNames } from './names.js';

function ChangeBuilds({ changeid }: { changeid: number }) {
  const builds: Live<Page<Build>> = useLive(
    (s) => getPage<Build>(`changes/${changeid}/builds`, 'builds', { limit: 20 }, s),
    [changeid],
    ['builds/*/new', 'builds/*/finished'],
    // Every card hears every build's events: coalesced, and a build that ends counts only
    // for the card that shows it (a list of 25 cards read 25 times on each build otherwise).
    2000,
    (m) => !(m as Build).complete || !!builds.data?.items.some((b) => b.buildid === (m as Build).buildid),
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

/** `filesOpen`: the list of files shown, not folded (a change's own page). */
export function ChangeCard({ c, filesOpen = false }: { c: Change; filesOpen?: boolean }) {
  const link = c.revlink ? safeUrl(c.revlink) : null;
  return (
    <>
      <div>
        <a href={href(`/changes/${c.changeid}`)}>Change {c.changeid}</a> <strong>{c.author}</strong>{' '}
        <span class="muted">{timestamp(c.when_timestamp)}</span>
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
        <details open={filesOpen}>
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
    </>
  );
}
