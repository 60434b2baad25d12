// A configuration file's YAML as plain data, the way the `yaml` package (YAML 1.2, its core
// schema) reads it, but read by js-yaml where that gives the same data, because it is faster.
//
// Measured (2026-11-29, Node 26, the fleet's 1,000 builders and 1,000 workers, 174 KB; a fresh
// process each, since a master parses once and cold):
//   node_modules/.bin/node --import tsx load/fleet/config-cpu.ts
// `yaml`'s parseDocument and toJS 375-406 ms of CPU, js-yaml 43-49 ms (the same data in block
// style: 320-336 against 55-65 ms). That was a fifth of a master's CPU before its first build.
//
// The two parsers differ where a configuration rarely goes; there `yaml` reads it, as before:
// - the scalars' types: js-yaml's core schema reads 0b101 as 5 and `-.5` as a string, so its
//   int and float here are yaml's own patterns (bool and null agree);
// - anchors, aliases, tags, directives, complex (`?`) keys and null keys (yaml's `null:` is
//   the key "", js-yaml's "null"): text that may hold one goes to `yaml`. The test is loose on
//   purpose (a `*` inside a quoted command sends a file there too): a false alarm costs time only;
// - anything js-yaml refuses: `yaml` reads it again, so errors are yaml's messages, as before.
// test/config/yaml-data.test.ts reads every configuration in the repository and a list of
// edge cases both ways and compares.
//
// `yaml` itself is loaded only when a text goes to it: importing it took 28-37 ms of CPU in
// a fresh process, js-yaml 4-6 ms (five each, 2026-11-29 04:25, load 24:
//   node_modules/.bin/node --input-type=module -e "const c0=process.cpuUsage(); await import('yaml'); console.log(process.cpuUsage(c0))"
// ), a cost every master's start paid for a parser its configuration seldom needs. Its
// package is CommonJS for Node, so `require` loads it synchronously where it is needed.
import { createRequire } from 'node:module';
import jsyaml from 'js-yaml';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);

const { Type, FAILSAFE_SCHEMA, types, load } = jsyaml;

// yaml's core schema (node_modules/yaml/dist/schema/core/int.js, float.js).
const INT = [
  { test: /^[-+]?[0-9]+$/, read: (s: string) => Number.parseInt(s, 10) },
  { test: /^0o[0-7]+$/, read: (s: string) => Number.parseInt(s.slice(2), 8) },
  { test: /^0x[0-9a-fA-F]+$/, read: (s: string) => Number.parseInt(s.slice(2), 16) },
];
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const SPECIAL: Record<string, number> = { nan: Number.NaN, inf: Number.POSITIVE_INFINITY };

const int = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s) => s !== null && INT.some((i) => i.test.test(s)),
  construct: (s) => INT.find((i) => i.test.test(s))!.read(s),
});
const float = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s) => s !== null && (FLOAT.test(s) || /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(s)),
  construct: (s) => {
    const special = SPECIAL[s.replace(/^[-+]?\./, '').toLowerCase()];
    if (special === undefined) return Number.parseFloat(s);
    return s.startsWith('-') ? -special : special;
  },
});
const SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: [types.null, types.bool, int, float] });

/** An anchor, alias or tag where a node may start, a directive, a complex key, a null key. */
const ONLY_YAML = /(?:^|[\s[{,])[&*!?]|^%|(?:^|[\s[{,])(?:~|null|Null|NULL)\s*:/m;

export type YamlData = { ok: true; data: unknown } | { ok: false; errors: string[] };

/** Whether js-yaml is asked first (else `yaml` alone reads it). */
export const jsYamlFirst = (text: string): boolean => !ONLY_YAML.test(text);

export function yamlData(text: string): YamlData {
  if (jsYamlFirst(text)) {
    try {
      return { ok: true, data: load(text, { schema: SCHEMA }) ?? null };
    } catch {
      // Read again below, for yaml's messages (or its reading, where it accepts what js-yaml did not).
    }
  }
  return slowly(text);
}

/** What the `yaml` package reads: the data, or its errors' first lines. */
export function slowly(text: string): YamlData {
  const { parseDocument } = require('yaml') as typeof Yaml;
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length)
    return { ok: false, errors: doc.errors.map((e) => e.message.split('\n')[0] ?? e.message) };
  return { ok: true, data: doc.toJS() ?? null };
}
