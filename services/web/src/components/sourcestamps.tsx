// A build set's source stamps, one a line: codebase, repository, branch, revision.
import type { SourceStamp } from '../types.js';

export function SourceStamps({ stamps }: { stamps: readonly SourceStamp[] }) {
  if (stamps.length === 0) return null;
  return (
    <ul class="plain">
      {stamps.map((ss) => (
        <li key={ss.ssid}>
          {ss.codebase && <strong>{ss.codebase}: </strong>}
          {ss.repository || '(no repository)'} {ss.branch && <>branch {ss.branch}</>}{' '}
          {ss.revision && <code>{ss.revision.slice(0, 12)}</code>}
        </li>
      ))}
    </ul>
  );
}
