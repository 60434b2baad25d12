// One forced build set through a master's REST API (Flotilla's or Buildbot's: the same
// JSON-RPC `force`), checked: a refused force, or a build set without a request for each of
// the scheduler's builders, would leave a benchmark with fewer builds than it says.
export async function forceChecked(api: string, scheduler: string, builders: number): Promise<void> {
  const res = await fetch(`${api}/forceschedulers/${scheduler}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'force', params: { username: 'b <b@x.y>' } }),
  });
  const answer = await res.text();
  // [bsid, {builderid: brid}]
  const brids = res.ok && !answer.includes('"error"') ? JSON.parse(answer).result?.[1] : undefined;
  if (Object.keys(brids ?? {}).length !== builders)
    throw new Error(`force ${scheduler}: ${res.status} ${answer}`);
}
