// After a force: the requests it made, until a worker starts their build. The builder page
// opens that build (`open`); a dashboard (the grid) stays put and turns the notice into a
// link to it, so a person forcing several builders in a row keeps their place.
import { useEffect } from 'preact/hooks';
import { getPage } from '../api.js';
import { useLive } from '../live.js';
import { href, navigate } from '../router.js';
import type { Build } from '../types.js';

export function FollowRequests({
  builderid,
  brids,
  open,
  builderName,
}: {
  builderid: number;
  brids: number[];
  open: boolean;
  builderName?: string;
}) {
  const first = brids[0]!;
  const builds = useLive(
    (s) => getPage<Build>(`buildrequests/${first}/builds`, 'builds', { limit: 1 }, s),
    [first],
    [`builders/${builderid}/builds/*/new`, `buildrequests/${first}/*`],
  );
  const b = builds.data?.items[0];
  useEffect(() => {
    if (b && open) navigate(href(`/builders/${b.builderid}/builds/${b.number}`));
  }, [b?.buildid]);
  const what = `Build request ${brids.join(', ')}${builderName ? ` for ${builderName}` : ''}`;
  return (
    <p class="notice" role="status" data-testid="forced">
      {b && !open ? (
        <>
          {what} started:{' '}
          <a href={href(`/builders/${b.builderid}/builds/${b.number}`)}>
            {builderName ?? 'build'} #{b.number}
          </a>
        </>
      ) : (
        `${what} submitted; waiting for a worker to start it…`
      )}
    </p>
  );
}
