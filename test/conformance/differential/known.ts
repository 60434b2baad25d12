// Differences from Buildbot 3.7 that are deliberate (docs/compatibility.md). A difference the
// judge finds is reported as explained when one of these says why; anything else is a
// difference to look into.
import type { Answer } from './judge.js';

interface Known {
  reason: string;
  applies: (req: { method: string; path: string }, bb: Answer, fl: Answer) => boolean;
}

const missingPath = (path: string) => /(^|\/)(999999|nosuch)(\/|\?|$)/.test(path);
const DATETIME =
  /[?&](started_at|complete_at|created_at|submitted_at|claimed_at|last_active|when_timestamp)(__(eq|ne|in|notin))?=/;

// Buildbot filters these in SQL, where dates compare as they should.
const SQL_FILTERED = /^((builders\/[^/]+\/)?(builds|buildrequests)|buildsets)(\?|$)/;

export const KNOWN: readonly Known[] = [
  {
    reason: 'Buildbot crashes (500) on a request that has an answer; Flotilla gives it',
    applies: (_r, bb, fl) => bb.status === 500 && fl.status === 200,
  },
  {
    reason: 'a POST without a Content-Type: Buildbot 500, Flotilla 415',
    applies: (r, bb, fl) => r.method === 'POST' && bb.status === 500 && fl.status === 415,
  },
  {
    reason: 'a resource that does not exist: the contract 404 `not found`',
    applies: (r, _bb, fl) => fl.status === 404 && fl.text === 'not found' && missingPath(r.path),
  },
  {
    reason: 'a path that names nothing (a step name that is no identifier): both 404, ours `not found`',
    applies: (_r, bb, fl) => bb.status === 404 && fl.status === 404 && fl.text === 'not found',
  },
  {
    reason:
      'a number in a path that is not plain digits (`/builds/2%20`, `/builds/+1`): Buildbot takes what int() takes, Flotilla 404',
    applies: (r, bb, fl) =>
      bb.status === 200 &&
      fl.status === 404 &&
      /\/(\d+(%20|_\d)|%20\d+|%2B\d+|\+\d+)(\/|\?|$)/.test(`/${r.path}`),
  },
  {
    reason: "JSON parse errors: Python's message text, not JavaScript's (the code and status agree)",
    applies: (_r, bb, fl) =>
      bb.status === 400 && fl.status === 400 && /-32700/.test(bb.text) && /-32700/.test(fl.text),
  },
  {
    reason:
      'a date filter where Buildbot filters in Python: it compares a datetime with an int (eq never matches, ne always); Flotilla compares the times',
    applies: (r, bb, fl) =>
      r.method === 'GET' &&
      DATETIME.test(r.path) &&
      !SQL_FILTERED.test(r.path) &&
      bb.status === 200 &&
      fl.status === 200,
  },
  {
    reason:
      'a repeated eq/ne on a filter Buildbot takes as one value (buildrequestid, buildsetid, complete, claimed): the contract says any of the values',
    applies: (r, bb, fl) =>
      bb.status === 200 &&
      fl.status === 200 &&
      /[?&](buildrequestid|buildsetid|complete|claimed)(__ne)?=[^&]*&\1(__ne)?=/.test(r.path),
  },
  {
    reason: 'claimed_by_masterid: Buildbot reads it as the claimed flag; Flotilla compares the master id',
    applies: (r, bb, fl) => /[?&]claimed_by_masterid/.test(r.path) && bb.status === 200 && fl.status === 200,
  },
  {
    reason:
      "properties of builders/<id>/builds/<number>: Buildbot takes the build number for a build id (its own 'fixme'); Flotilla reads that builder's build",
    applies: (r, bb, fl) =>
      /^builders\/[^/]+\/builds\/\d+\/properties/.test(r.path) && bb.status === 200 && fl.status === 200,
  },
  {
    reason: '`contains` on a number: Buildbot fails once a row is there to compare; Flotilla says 400',
    applies: (r, _bb, fl) =>
      fl.status === 400 && /needs a text or list field/.test(fl.text) && /__contains=/.test(r.path),
  },
  {
    reason: "text/plain: the workers' configured_on lists, which have no order, in another order",
    applies: (_r, bb, fl) => fl.text.length === bb.text.length && /configured_on/.test(bb.text),
  },
  {
    reason:
      'an unknown method on a scheduler or force scheduler: Buildbot 200 `result: null`, Flotilla -32601 as on every other path (docs/security.md)',
    applies: (r, bb, fl) =>
      r.method === 'POST' &&
      /(^|\/)(force)?schedulers\/[^/]+$/.test(r.path) &&
      bb.status === 200 &&
      fl.status === 501 &&
      fl.text.includes('-32601'),
  },
  {
    reason:
      "a force asking for builders that are not the scheduler's, or not as a list of names or an id: Buildbot drops them or 500, Flotilla 400 -32602 naming the parameter (docs/security.md)",
    applies: (r, _bb, fl) =>
      r.method === 'POST' &&
      /(^|\/)forceschedulers\/[^/]+$/.test(r.path) &&
      fl.status === 400 &&
      fl.text.includes('-32602') &&
      /"(builderNames|builderid)"/.test(fl.text),
  },
];

export function explain(req: { method: string; path: string }, bb: Answer, fl: Answer): string | null {
  return KNOWN.find((k) => k.applies(req, bb, fl))?.reason ?? null;
}
