// One build request (`#/buildrequests/7`, as Buildbot's): its builder, build set (reason,
// source stamps), state, times, the builds that ran it (a retried request has several), and
// Cancel while it waits, for those the rules allow.
import { useState } from 'preact/hooks';
import { ApiError, getOne, getPage, rpc } from '../api.js';
import { BuildLink, ErrorBox, Loading, Result, Section } from '../components/common.js';
import { useNames } from '../components/names.js';
import { SourceStamps } from '../components/sourcestamps.js';
import { elapsed, timestamp } from '../format.js';
import { useLive, useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { can, useSession } from '../session.js';
import { useTitle } from '../title.js';
import type { Build, BuildRequest, Buildset } from '../types.js';
import { RequestState } from './buildrequests.js';

export function BuildRequestPage({ route }: { route: Route }) {
  const id = Number(route.params.buildrequestid);
  const now = useNow();
  const { config } = useSession();
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const request = useLive(
    async (s) => {
      const r = await getOne<BuildRequest>(`buildrequests/${id}`, 'buildrequests', {}, s);
      const bs = await getOne<Buildset>(`buildsets/${r.buildsetid}`, 'buildsets', {}, s);
      return { r, bs };
    },
    [id],
    [`buildrequests/${id}/*`],
  );
  const builds = useLive(
    (s) => getPage<Build>(`buildrequests/${id}/builds`, 'builds', { order: 'buildid', limit: 50 }, s),
    [id],
    [`buildrequests/${id}/*`, 'builds/*/new', 'builds/*/finished'],
  );
  const builderName = useNames('builders', [request.data?.r.builderid]);
  useTitle(`Build request ${id}`);
  if (request.error) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>Build request {id}</h1>
        <ErrorBox error={request.error} what={`reading build request ${id}`} />
      </main>
    );
  }
  if (!request.data)
    return (
      <main id="main" tabIndex={-1}>
        <Loading when />
      </main>
    );
  const { r, bs } = request.data;
  const cancel = async () => {
    setActionError(null);
    try {
      await rpc(`buildrequests/${id}`, 'cancel', { reason: 'cancelled from the web UI' });
      request.reload();
    } catch (err) {
      setActionError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    }
  };
  return (
    <main id="main" tabIndex={-1}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/buildrequests">Build requests</a> /
      </nav>
      <h1>
        Build request {id} <RequestState r={r} />
      </h1>
      <p>
        For <a href={href(`/builders/${r.builderid}`)}>{builderName(r.builderid)}</a>, priority {r.priority},
        submitted {timestamp(r.submitted_at)}
        {r.complete
          ? `, complete ${timestamp(r.complete_at)}`
          : `, waiting ${elapsed(r.submitted_at, null, now)}`}
      </p>
      <div class="toolbar" data-testid="request-actions">
        {!r.complete && !r.claimed && can(config, 'cancel') && (
          <button type="button" onClick={cancel}>
            Cancel
          </button>
        )}
      </div>
      <ErrorBox error={actionError} what="cancelling the request" />
      <Section title="Build set" id="r-bs">
        <p>
          Build set {bs.bsid}: {bs.reason}
          {bs.parent_buildid !== null && (
            <>
              {' '}
              — triggered by{' '}
              <a href={href(`/builds/${bs.parent_buildid}`)}>parent build {bs.parent_buildid}</a>
            </>
          )}
        </p>
        <SourceStamps stamps={bs.sourcestamps} />
      </Section>
      <Section title="Builds" id="r-builds">
        <ErrorBox error={builds.error} what="reading its builds" />
        {builds.data && builds.data.items.length === 0 && <p class="muted">No build has started for it.</p>}
        <ul class="plain">
          {(builds.data?.items ?? []).map((b) => (
            <li key={b.buildid}>
              <BuildLink b={b} builderName={builderName(b.builderid)} />{' '}
              <Result results={b.results} complete={b.complete} />
            </li>
          ))}
        </ul>
      </Section>
    </main>
  );
}
