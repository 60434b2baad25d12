// A step's log: the viewer (components/log-viewer.tsx) over the log's lines, followed live
// while the log grows (`logs/<id>/lines` events, and REST for any gap), with a link per line,
// jumps to the start and the end, and the raw download.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { LogLinesMessage } from '../../../core/api-shapes.js';
import { apiUrl, getOne } from '../api.js';
import { ErrorBox, Loading } from '../components/common.js';
import { LogViewer } from '../components/log-viewer.js';
import { useNames } from '../components/names.js';
import { events } from '../events.js';
import { useLive } from '../live.js';
import { LogModel } from '../log-model.js';
import { href, navigate, type Route } from '../router.js';
import { useTitle } from '../title.js';
import { DELETED, type Log, type Step } from '../types.js';

export function LogPage({ route }: { route: Route }) {
  const { builderid, number, step, slug } = route.params as Record<string, string>;
  const base = `/builders/${builderid}/builds/${number}/steps/${step}/logs/${encodeURIComponent(slug!)}`;
  const log = useLive(
    (s) =>
      getOne<Log>(
        `builders/${builderid}/builds/${number}/steps/${step}/logs/${encodeURIComponent(slug!)}`,
        'logs',
        {},
        s,
      ),
    [base],
  );
  const stepInfo = useLive(
    (s) => getOne<Step>(`builders/${builderid}/builds/${number}/steps/${step}`, 'steps', {}, s),
    [base],
  );
  const builderName = useNames('builders', [Number(builderid)]);
  useTitle(`${log.data?.name ?? slug} · ${builderName(Number(builderid))} #${number}`);
  const l = log.data;
  const model = useMemo(() => (l ? new LogModel(l.logid, l.num_lines, l.type === 's') : null), [l?.logid]);
  const [complete, setComplete] = useState(true);
  const [follow, setFollow] = useState(false);
  const [, tick] = useState(0);
  useEffect(() => {
    if (!l || !model) return;
    let pending: ReturnType<typeof setTimeout> | null = null;
    const refresh = () => {
      if (pending) clearTimeout(pending);
      pending = null;
      void getOne<Log>(`logs/${l.logid}`, 'logs').then(
        (fresh) => {
          model.setNumLines(fresh.num_lines);
          setComplete(fresh.complete);
        },
        () => {},
      );
    };
    setComplete(l.complete);
    setFollow(!l.complete && !route.query.get('line'));
    const offs = [
      events.subscribe(`logs/${l.logid}/lines`, (e) => {
        if ('key' in e) model.append(e.message as LogLinesMessage);
      }),
      // A log event (new lines appended, finished): what REST says now, at most once a second
      // while lines stream in, at once when the log finishes.
      events.subscribe(`logs/${l.logid}/*`, (e) => {
        const finished = 'key' in e && e.key.endsWith('/finished');
        if (finished) refresh();
        else if (!pending) pending = setTimeout(refresh, 1000);
      }),
      // Lines are not resumed: after a reconnect the count is read again and the gap with it.
      events.onReconnect(refresh),
    ];
    // Lines written between the first read and the subscription: the count again.
    refresh();
    const t = setInterval(() => tick((x) => x + 1), 1000);
    return () => {
      for (const off of offs) off();
      clearInterval(t);
      if (pending) clearTimeout(pending);
    };
  }, [model]);
  const selected = Number(route.query.get('line')) || null;
  const lineLink = (n: number) => href(base, { line: n });
  return (
    <main id="main" tabIndex={-1} class="log-page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/builders">Builders</a> /{' '}
        <a href={href(`/builders/${builderid}`)}>{builderName(Number(builderid))}</a> /{' '}
        <a href={href(`/builders/${builderid}/builds/${number}`)}>#{number}</a> /{' '}
        {stepInfo.data?.name ?? `step ${step}`} /
      </nav>
      <h1>
        {l?.name ?? slug}{' '}
        <span class="muted small" data-testid="log-count">
          {model ? `${model.numLines.toLocaleString('en')} lines` : ''}
          {l && !complete ? ', growing' : ''}
        </span>
      </h1>
      <ErrorBox error={log.error} what="reading the log" />
      <Loading when={!l && !log.error} />
      {l?.type === DELETED && (
        <p class="card" data-testid="log-deleted">
          Log deleted by retention: its {l.num_lines.toLocaleString('en')} lines are no longer kept.
        </p>
      )}
      {l && model && l.type !== DELETED && (
        <>
          <div class="toolbar" role="toolbar" aria-label="Log">
            <button type="button" onClick={() => navigate(href(base, { line: 1 }), true)}>
              Start
            </button>
            <button
              type="button"
              onClick={() => {
                navigate(href(base), true);
                setFollow(true);
              }}
              aria-pressed={follow}
            >
              End{!complete ? ' and follow' : ''}
            </button>
            <form
              class="inline"
              onSubmit={(e) => {
                e.preventDefault();
                const v = Number((e.currentTarget.elements.namedItem('goto') as HTMLInputElement).value);
                if (Number.isInteger(v) && v > 0)
                  navigate(href(base, { line: Math.min(v, model.numLines) }), true);
              }}
            >
              <label>
                Line <input name="goto" type="text" inputMode="numeric" size={8} />
              </label>{' '}
              <button type="submit">Go</button>
            </form>
            <a class="button" href={apiUrl(`logs/${l.logid}/raw`)} download>
              Download
            </a>
            {l.type === 's' && (
              <span class="legend muted small">
                <span class="l-e">stderr</span> <span class="l-h">header</span>
              </span>
            )}
          </div>
          {model.error && (
            <div class="error" role="alert">
              {model.error}
            </div>
          )}
          <LogViewer
            model={model}
            stdio={l.type === 's'}
            selected={selected}
            lineLink={lineLink}
            follow={follow}
            setFollow={setFollow}
            label={`${l.name}, ${model.numLines.toLocaleString('en')} lines`}
          />
        </>
      )}
    </main>
  );
}
