// What the workers that connected between two heap snapshots of one master hold, by
// constructor: each class's objects and self size in the second snapshot minus the first,
// divided by the workers that connected between them (the snapshots run.ts writes with
// FLEET_HEAP_SNAPSHOT=DIR: fleet-N.tenth and fleet-N.all).
//
//   node --import tsx load/fleet/heap-classes.ts DIR/fleet-1.tenth.heapsnapshot DIR/fleet-1.all.heapsnapshot 300 [TOP]
//
// Classes as DevTools' summary groups them, closures and internal arrays split by their name
// (which function, which internal list) since that is what says whose they are.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

type Classes = Map<string, { count: number; bytes: number }>;

function classes(path: string): Classes {
  const s = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const types = s.snapshot.meta.node_types[0];
  const out: Classes = new Map();
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const type = types[s.nodes[i + typeAt]!]!;
    const name = s.strings[s.nodes[i + nameAt]!]!;
    const key =
      type === 'object' || type === 'native'
        ? name
        : type.endsWith('string')
          ? '(string)'
          : `(${type}) ${name.slice(0, 60)}`;
    const c = out.get(key) ?? { count: 0, bytes: 0 };
    c.count++;
    c.bytes += s.nodes[i + sizeAt]!;
    out.set(key, c);
  }
  return out;
}

const [before, after, workers, top] = process.argv.slice(2);
if (!before || !after || !workers) throw new Error('usage: heap-classes.ts BEFORE AFTER WORKERS [TOP]');
const [a, b] = [classes(before), classes(after)];
const n = Number(workers);
const rows = [...new Set([...a.keys(), ...b.keys()])]
  .map((key) => {
    const [x, y] = [a.get(key) ?? { count: 0, bytes: 0 }, b.get(key) ?? { count: 0, bytes: 0 }];
    return { key, count: (y.count - x.count) / n, bytes: (y.bytes - x.bytes) / n };
  })
  .sort((p, q) => q.bytes - p.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
console.log(
  `self size a worker, all classes: ${total.toFixed(0)} bytes (${n} workers between the snapshots)\n`,
);
console.log('| class | objects a worker | bytes a worker |');
console.log('|---|---|---|');
for (const r of rows.slice(0, Number(top ?? 40)))
  console.log(`| ${r.key.replaceAll('|', '\\|')} | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`);
