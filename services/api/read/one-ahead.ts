// A moved log's download fetches its object span by span (4 MiB each, logs.ts): the GET of the
// next span is sent while the rows of this one are sent to the client, so that the client does
// not wait for a whole span's round trip between spans. One ahead, not more: a download holds
// at most two spans in memory. Measured: load/results/object-store.md, "First reads" (/raw).
//
// A GET that fails while its span is not yet wanted fails the download when it is (its
// rejection is held until then, never unhandled); a download that ends early (the client
// went away) leaves the span ahead to be collected.
export async function* oneAhead<G, T>(
  groups: readonly G[],
  fetch: (group: G) => Promise<T[]>,
): AsyncGenerator<T> {
  const ahead = (i: number): Promise<T[]> | null => {
    if (i >= groups.length) return null;
    const p = fetch(groups[i]!);
    p.catch(() => {});
    return p;
  };
  let next = ahead(0);
  for (let i = 0; next; i++) {
    const rows = await next;
    next = ahead(i + 1);
    yield* rows;
  }
}
