// The workers of the builders page, every one of them: each says the builders it is configured
// on, so one list serves all the rows. Read in pages until the total: reading only the first
// 200 by name left the rows of builders whose workers came later showing none (a farm of 1,000
// workers), and a row cannot tell "none" from "not read". Four fields a worker, so a page of
// PAGE costs little; 1,000 workers are two reads.
import { getPage } from '../api.js';
import type { Worker } from '../types.js';

const PAGE = 500;
const FIELDS = ['workerid', 'name', 'connected_to', 'configured_on'];

export async function allWorkers(signal: AbortSignal): Promise<Worker[]> {
  const out: Worker[] = [];
  for (;;) {
    const page = await getPage<Worker>(
      'workers',
      'workers',
      { order: 'name', limit: PAGE, offset: out.length, field: FIELDS },
      signal,
    );
    out.push(...page.items);
    if (page.items.length < PAGE || out.length >= page.total) return out;
  }
}
