// The last builds of many builders (the builders page's coloured boxes) in a few reads, not
// one per builder: Buildbot's builders page reads one page of the newest builds of all
// builders and shares it out, so a builder that did not build lately shows no box. Here one
// read asks for `per` builds for each builder on screen (`builderid__in`, newest first,
// limit per × builders); a builder that busier ones crowded out of that page is asked for
// again, in one read for all of them, below the oldest build already read. ROUNDS bounds it:
// at most that many reads however skewed the builders are (one builder with hundreds of
// builds a day beside ones with a build a week). A builder still short after them shows what
// was read, its own page links the rest.
//
// The REST API has no "the last n of each" query (a per-group limit); this is the query
// language's nearest form, with its cost bounded.
import { getPage } from '../api.js';
import type { Build } from '../types.js';

const ROUNDS = 3;
const FIELDS = ['buildid', 'number', 'builderid', 'results', 'complete'];

export async function lastBuilds(
  builderids: readonly number[],
  per: number,
  signal: AbortSignal,
): Promise<Map<number, Build[]>> {
  const out = new Map<number, Build[]>(builderids.map((id) => [id, []]));
  let wanted = [...builderids];
  let below: number | undefined;
  for (let round = 0; round < ROUNDS && wanted.length > 0; round++) {
    const limit = per * wanted.length;
    const page = await getPage<Build>(
      'builds',
      'builds',
      { builderid__in: wanted, order: '-buildid', limit, field: FIELDS, buildid__lt: below },
      signal,
    );
    for (const b of page.items) {
      const list = out.get(b.builderid);
      if (list && list.length < per) list.push(b);
      below = Math.min(below ?? b.buildid, b.buildid);
    }
    // A short page: every builder asked for got all it has.
    if (page.items.length < limit) break;
    wanted = wanted.filter((id) => out.get(id)!.length < per);
  }
  return out;
}
