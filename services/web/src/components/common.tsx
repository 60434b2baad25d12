// Small pieces every page uses: errors, results, pagers, links to builds.
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';
import { elapsed, resultName } from '../format.js';
import { useNow } from '../live.js';
import { href } from '../router.js';

/** An error from the API, said to the person: its status and the API's own words. */
export function ErrorBox({ error, what }: { error: ApiError | null; what?: string }) {
  if (!error) return null;
  const status =
    error.status === 0
      ? 'No answer'
      : error.status === 403
        ? '403 Forbidden'
        : error.status === 404
          ? '404 Not found'
          : `Error ${error.status}`;
  return (
    <div class="error" role="alert">
      <strong>{status}</strong>
      {what ? ` while ${what}` : ''}: {error.message}
    </div>
  );
}

export function Result({
  results,
  complete = true,
  text,
}: {
  results: number | null;
  complete?: boolean;
  text?: string;
}) {
  const name = resultName(results, complete);
  return <span class={`result r-${name}`}>{text ?? name}</span>;
}

/** Coloured box for one build: a link, titled with what it is. */
export function BuildBox({
  builderid,
  number,
  results,
  complete,
}: {
  builderid: number;
  number: number;
  results: number | null;
  complete: boolean;
}) {
  const name = resultName(results, complete);
  return (
    <a
      class={`box r-${name}`}
      href={href(`/builders/${builderid}/builds/${number}`)}
      title={`build ${number}: ${name}`}
    >
      {number}
    </a>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  ) : null;
}

/** Pages of a collection, by `offset`/`limit` (the page number lives in the link). */
export function Pager({
  total,
  page,
  size,
  link,
  label,
  newest = false,
  shown = false,
}: {
  total: number;
  page: number;
  size: number;
  link: (page: number) => string;
  label: string;
  /** Newest first: the pages go to older ones. */
  newest?: boolean;
  /** The label on screen too: where two pagers page two axes (the console). */
  shown?: boolean;
}) {
  const [prev, next] = newest ? ['← Newer', 'Older →'] : ['← Previous', 'Next →'];
  const pages = Math.max(1, Math.ceil(total / size));
  // A link past the end (the list shrank, or a hand-made link) says so, and goes back to
  // the last page rather than one more empty one.
  const past = page >= pages;
  const first = total === 0 ? 0 : page * size + 1;
  const last = Math.min(total, (page + 1) * size);
  const n = (x: number) => x.toLocaleString('en');
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      {shown && <strong class="pager-label">{label}:</strong>}
      {page > 0 ? <a href={link(Math.min(page, pages) - 1)}>{prev}</a> : <span class="muted">{prev}</span>}
      <span>{past ? `none of ${n(total)} here` : `${n(first)}–${n(last)} of ${n(total)}`}</span>
      {page + 1 < pages ? <a href={link(page + 1)}>{next}</a> : <span class="muted">{next}</span>}
    </nav>
  );
}

export function Section({
  title,
  children,
  id,
}: {
  title: ComponentChildren;
  children: ComponentChildren;
  id?: string;
}) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A page number from the route's query (0-based), never negative. */
export function pageOf(q: URLSearchParams, key = 'page'): number {
  const n = Number(q.get(key) ?? '0');
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** A worker by name, linking its page; `none` when a build has no worker yet. */
export function WorkerLink({ workerid, name }: { workerid: number | null | undefined; name: string }) {
  if (workerid === null || workerid === undefined) return <span class="muted">none</span>;
  // Until its name is read, the names cache says `#3`: beside builds, that reads as build 3.
  return <a href={href(`/workers/${workerid}`)}>{name === `#${workerid}` ? `worker ${workerid}` : name}</a>;
}

/** A build by its builder's name and number, linking its page. */
export function BuildLink({
  b,
  builderName,
}: {
  b: { builderid: number; number: number };
  builderName: string;
}) {
  return (
    <a href={href(`/builders/${b.builderid}/builds/${b.number}`)}>
      {builderName} #{b.number}
    </a>
  );
}

/** The time since `since` (epoch seconds), ticking each second: only this text re-renders. */
export function Elapsed({ since }: { since: number | null | undefined }) {
  const now = useNow(1000);
  return <>{elapsed(since, null, now)}</>;
}
