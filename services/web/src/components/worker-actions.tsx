// Pause / unpause / graceful stop / kill of a worker, for those the rules allow: Buildbot's
// JSON-RPC call on the worker. The API's answer (accepted, or its error) is said on the
// page; what the master then does (paused, stopping, gone) shows as the worker's state
// changes, live. The workers list and a worker's page share this.
import { useState } from 'preact/hooks';
import { ApiError, rpc } from '../api.js';
import type { Worker } from '../types.js';
import { ErrorBox } from './common.js';

type Method = 'pause' | 'unpause' | 'stop' | 'kill';

const DONE: Record<Method, string> = {
  pause: 'pause accepted: no new builds start on it',
  unpause: 'unpause accepted: builds may start on it again',
  stop: 'graceful stop accepted: it disconnects once its running builds are done',
  kill: 'kill accepted: its master disconnects it now, running builds and all',
};

export interface WorkerActions {
  act: (w: Worker, method: Method) => Promise<void>;
  busy: boolean;
  answer: string | null;
  error: ApiError | null;
}

export function useWorkerActions(reload: () => void): WorkerActions {
  const [error, setError] = useState<ApiError | null>(null);
  const [answer, setAnswer] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (w: Worker, method: Method) => {
    if (method === 'kill' && !confirm(`Kill ${w.name}? Its running builds end at once.`)) return;
    setError(null);
    setAnswer(null);
    setBusy(true);
    try {
      await rpc(`workers/${w.workerid}`, method, { reason: `${method} from the web UI` });
      setAnswer(`${w.name}: ${DONE[method]}.`);
      reload();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  };
  return { act, busy, answer, error };
}

/** What the last action got: the API's answer or its error. */
export function WorkerAnswer({ actions }: { actions: WorkerActions }) {
  return (
    <>
      <ErrorBox error={actions.error} what="acting on a worker" />
      {actions.answer && (
        <p class="notice" role="status" data-testid="worker-answer">
          {actions.answer}
        </p>
      )}
    </>
  );
}

/** The buttons for one worker: only while it is connected (a worker offline has no master to tell). */
export function WorkerButtons({ w, actions }: { w: Worker; actions: WorkerActions }) {
  const { act, busy } = actions;
  if (w.connected_to.length === 0) return null;
  return (
    <>
      {w.paused ? (
        <button type="button" disabled={busy} onClick={() => act(w, 'unpause')}>
          Unpause
        </button>
      ) : (
        <button type="button" disabled={busy} onClick={() => act(w, 'pause')}>
          Pause
        </button>
      )}{' '}
      <button
        type="button"
        disabled={busy || w.graceful}
        onClick={() => act(w, 'stop')}
        title="Stop after its running builds"
      >
        Graceful stop
      </button>{' '}
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => act(w, 'kill')}
        title="Disconnect it now, ending its running builds"
      >
        Kill
      </button>
    </>
  );
}

/** A worker's state in words: connected or offline, paused, stopping. */
export function WorkerState({ w }: { w: Worker }) {
  const online = w.connected_to.length > 0;
  return (
    <>
      <span class={`state ${online ? 'on' : 'off'}`}>{online ? 'connected' : 'offline'}</span>
      {w.paused && ' paused'}
      {w.graceful && ' stopping'}
    </>
  );
}
