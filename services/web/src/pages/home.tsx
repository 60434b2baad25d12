// Home: what runs now (current step, live duration), the latest finished builds, pending
// requests, and the masters and workers at a glance. Each list is one paged read.
import { useEffect } from 'preact/hooks';
import { getPage } from '../api.js';
import { BuildsTable } from '../components/builds-table.js';
import { BuildLink, Elapsed, ErrorBox, Loading, Section } from '../components/common.js';
import { statusOf, useCurrentSteps } from '../components/current-step.js';
import { useNames } from '../components/names.js';
import { plural } from '../format.js';
import { useLive, useNow } from '../live.js';
import { href } from '../router.js';
import { useTitle } from '../title.js';
import type { Build, BuildRequest, Master, Worker } from '../types.js';

const RUNNING = 25;
const FINISHED = 20;
const PENDING = 20;

export function HomePage() {
  useTitle('');
  // The page's times move every 30 s; the running builds' durations tick each second in their
  // own cells (Elapsed), so the page is not rendered again every second (5% of a core with
  // 20 builds running: load/results/web-pages.md).
  const now = useNow(30_000);
  const running = useLive(
    (s) => getPage<Build>('builds', 'builds', { complete: false, order: '-buildid', limit: RUNNING }, s),
    [],
    ['builds/*/new', 'builds/*/finished'],
    1000,
  );
  // The step each running build is in: read once per build, then from the steps' events.
  const steps = useCurrentSteps(running.data?.items);
  const finished = useLive(
    (s) => getPage<Build>('builds', 'builds', { complete: true, order: '-buildid', limit: FINISHED }, s),
    [],
    ['builds/*/finished'],
  );
  const pending = useLive(
    (s) =>
      getPage<BuildRequest>(
        'buildrequests',
        'buildrequests',
        { claimed: false, complete: false, order: '-buildrequestid', limit: PENDING },
        s,
      ),
    [],
    ['buildrequests/*/*'],
  );
  const masters = useLive(
    (s) => getPage<Master>('masters', 'masters', { active: true, order: 'name', limit: 10 }, s),
    [],
    ['masters/*/*'],
  );
  const workers = useLive(
    (s) => getPage<Worker>('workers', 'workers', { order: 'name', limit: 20 }, s),
    [],
    ['workers/*/*'],
  );
  const builderName = useNames('builders', [
    ...(running.data?.items ?? []).map((b) => b.builderid),
    ...(finished.data?.items ?? []).map((b) => b.builderid),
    ...(pending.data?.items ?? []).map((r) => r.builderid),
  ]);
  const ready = !!(running.data && finished.data && pending.data);
  useEffect(() => {
    // The browser's own timeline: load/ui/ reads this mark (usable = every list shown).
    if (ready && performance.getEntriesByName('flotilla:home-usable').length === 0) {
      performance.mark('flotilla:home-usable');
    }
  }, [ready]);
  const connected = (workers.data?.items ?? []).filter((w) => w.connected_to.length > 0);
  return (
    <main id="main" tabIndex={-1} data-ready={ready ? 'yes' : undefined}>
      <h1>Flotilla</h1>
      <div class="grid2">
        <Section title={`Running now${running.data ? ` (${running.data.total})` : ''}`} id="h-running">
          <ErrorBox error={running.error} what="reading running builds" />
          <Loading when={!running.data && !running.error} />
          {running.data && running.data.items.length === 0 && <p class="muted">Nothing is running.</p>}
          {running.data && running.data.items.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th scope="col">Build</th>
                  <th scope="col">Current step</th>
                  <th scope="col">Running for</th>
                </tr>
              </thead>
              <tbody>
                {running.data.items.map((b) => {
                  const step = steps.get(b.buildid);
                  return (
                    <tr key={b.buildid}>
                      <td>
                        <BuildLink b={b} builderName={builderName(b.builderid)} />
                      </td>
                      <td>{statusOf(b, step)}</td>
                      <td class="num" data-testid="live-duration">
                        <Elapsed since={b.started_at} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </Section>
        <Section title={`Pending requests${pending.data ? ` (${pending.data.total})` : ''}`} id="h-pending">
          <ErrorBox error={pending.error} what="reading pending requests" />
          <Loading when={!pending.data && !pending.error} />
          {pending.data && pending.data.items.length === 0 && <p class="muted">No request waits.</p>}
          <ul class="plain">
            {(pending.data?.items ?? []).map((r) => (
              <li key={r.buildrequestid}>
                <a href={href(`/builders/${r.builderid}`)}>{builderName(r.builderid)}</a>{' '}
                <a href={href(`/buildrequests/${r.buildrequestid}`)}>request {r.buildrequestid}</a>, waiting{' '}
                <Elapsed since={r.submitted_at} />
              </li>
            ))}
          </ul>
        </Section>
      </div>
      <Section title="Latest finished builds" id="h-finished">
        <ErrorBox error={finished.error} what="reading finished builds" />
        <Loading when={!finished.data && !finished.error} />
        {finished.data && (
          <BuildsTable builds={finished.data.items} builderName={builderName} now={now} when="finished" />
        )}
      </Section>
      <div class="grid2">
        <Section title="Masters" id="h-masters">
          <ErrorBox error={masters.error} what="reading masters" />
          {masters.data && (
            <p>
              {plural(masters.data.total, 'active master')}
              {masters.data.items.length > 0 && ': '}
              {masters.data.items.map((m) => m.name).join(', ')} (<a href="#/masters">all masters</a>)
            </p>
          )}
        </Section>
        <Section title="Workers" id="h-workers">
          <ErrorBox error={workers.error} what="reading workers" />
          {workers.data && (
            <p>
              <a href="#/workers">{plural(workers.data.total, 'worker')}</a>
              {workers.data.total > workers.data.items.length
                ? ` (first ${workers.data.items.length}: `
                : ' ('}
              {plural(connected.length, 'connected', 'connected')})
            </p>
          )}
          <ul class="chips">
            {(workers.data?.items ?? []).map((w) => (
              <li key={w.workerid} class={w.connected_to.length ? 'on' : 'off'}>
                <a href={href(`/workers/${w.workerid}`)}>{w.name}</a>{' '}
                {w.connected_to.length ? (w.paused ? '(paused)' : '') : '(offline)'}
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </main>
  );
}
