// Forced build sets through a master's REST API (Flotilla's or Buildbot's: the same JSON-RPC
// `force` the web UI's force dialog sends), for the benchmarks here and the tests that drive
// Buildbot as a user does (test/e2e/imported-builders.test.ts, test/deploy/node-runtime.test.ts).
// The one copy of the request: load/logs, load/workers, load/busy, load/chaos and load/fleet
// all force through it. A refused force throws with
// the answer: a benchmark must not run on with fewer builds than it says, nor a test wait for
// a build nobody asked for.

/** What a caller may add to the POST: a session's cookie, a limit on the wait for the answer. */
export interface ForceOptions {
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Force one build set on `scheduler` with `params`; its build requests' ids by builder id. */
export async function forceBuildSet(
  api: string,
  scheduler: string,
  params: Record<string, unknown>,
  options: ForceOptions = {},
): Promise<Record<string, number>> {
  const res = await fetch(`${api}/forceschedulers/${scheduler}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'force', params }),
    ...(options.timeoutMs ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
  });
  const answer = await res.text();
  // {result: [bsid, {builderid: brid}]}, or {error: ...}; an answer that is not JSON is refused too.
  const result = res.ok ? resultOf(answer) : undefined;
  if (!result) throw new Error(`force ${scheduler} ${JSON.stringify(params)}: ${res.status} ${answer}`);
  return result[1];
}

function resultOf(answer: string): [number, Record<string, number>] | undefined {
  try {
    const body = JSON.parse(answer) as { result?: [number, Record<string, number>]; error?: unknown };
    return body.error === undefined ? body.result : undefined;
  } catch {
    return undefined;
  }
}

/** Force a build set of one builder's request; that request's id. */
export async function forceOneRequest(
  api: string,
  scheduler: string,
  params: Record<string, unknown>,
  options: ForceOptions = {},
): Promise<number> {
  const brids = Object.values(await forceBuildSet(api, scheduler, params, options));
  if (brids.length !== 1) throw new Error(`force ${scheduler}: ${brids.length} requests, not 1`);
  return brids[0]!;
}

/** Force a build set and check it has a request for each of the scheduler's `builders`. */
export async function forceChecked(api: string, scheduler: string, builders: number): Promise<void> {
  const brids = await forceBuildSet(api, scheduler, { username: 'b <b@x.y>' });
  if (Object.keys(brids).length !== builders)
    throw new Error(`force ${scheduler}: ${Object.keys(brids).length} requests, not ${builders}`);
}
