// One change as the changes list and a change's page show it: author, time, branch, revision
// (linked where the change has a web revlink), repository, comments, files, and the builds
// it caused, which the page reads for all its changes at once (useBuildsOfChanges: live, a
// build that starts for it appears).
import { timestamp } from '../format.js';
import { safeUrl } from '../pages/build.js';
import { href } from '../router.js';
import type { Change } from '../types.js';
import type { CellBuild } from './change-builds.js';
import { Result } from './common.js';
import { useNames } from './names.js';

/** The builds a change caused: at most this many on a card. */
export const CARD_BUILDS = 20;

function CausedBuilds({ list }: { list: readonly CellBuild[] }) {
  const builderName = useNames(
    'builders',
    list.map((b) => b.builderid),
  );
  return (
    <>
      {list.map((b) => (
        <a key={b.buildid} class="chip" href={href(`/builders/${b.builderid}/builds/${b.number}`)}>
          {builderName(b.builderid)} #{b.number} <Result results={b.results} complete={b.complete} />
        </a>
      ))}
    </>
  );
}

/**
 * `filesOpen`: the list of files shown, not folded (a change's own page). `builds`: the builds
 * it caused, newest first (undefined while they are read).
 */
export function ChangeCard({
  c,
  builds,
  filesOpen = false,
}: {
  c: Change;
  builds: readonly CellBuild[] | undefined;
  filesOpen?: boolean;
}) {
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
        <CausedBuilds list={builds ?? []} />
      </div>
    </>
  );
}
