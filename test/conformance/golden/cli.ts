// The golden cases against any server that serves a fresh copy of the fixture, by hand:
//
//   node --import tsx test/conformance/golden/cli.ts --base http://127.0.0.1:PORT/api/v2
//        [--only id,id] [--skip-mutating]
//
// npm test runs them against Flotilla (test/conformance/compare.test.ts). Against a real
// Buildbot 3.7 on the fixture (test/fixtures/buildbot-3.7/README.md), every `buildbot` case
// passes and every `contract` and `sane` case fails: that is how a new recording is checked.
// Prints one line per failing case, then `N passed, M failed`; exits 1 when any failed.
import { parseArgs } from 'node:util';
import { goldenCases } from '../../helpers/buildbot-recorded.js';
import { replayCases } from './replay.js';

const { values } = parseArgs({
  options: { base: { type: 'string' }, only: { type: 'string' }, 'skip-mutating': { type: 'boolean' } },
});
if (!values.base) {
  console.error('usage: cli.ts --base http://127.0.0.1:PORT/api/v2 [--only id,id] [--skip-mutating]');
  process.exit(2);
}
const only = values.only ? new Set(values.only.split(',')) : null;
const cases = goldenCases().filter(
  (c) => (!only || only.has(c.id)) && !(values['skip-mutating'] && c.mutates),
);
const { ran, failures } = await replayCases(values.base, cases);
for (const f of failures) console.log(`FAIL ${f}`);
console.log(`${ran - failures.length} passed, ${failures.length} failed`);
process.exitCode = failures.length ? 1 : 0;
