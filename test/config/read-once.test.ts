// A schema read once per distinct value and parse (services/core/config/master-config/read-once.ts):
// the same results as the schema alone, each its own object, every bad copy reported, and
// nothing kept across parses or for values JSON text cannot tell apart.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ConfigError } from '../../services/core/config/errors.js';
import { ReadOnce } from '../../services/core/config/master-config/read-once.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';

function counted() {
  const calls = { n: 0 };
  const inner = z
    .object({ a: z.unknown(), b: z.number().default(1) })
    .strict()
    .transform((v) => {
      calls.n++;
      return v;
    });
  return { calls, list: z.array(new ReadOnce(inner)) };
}

describe('ReadOnce', () => {
  it('reads a repeated value once per parse and hands out copies', () => {
    const { calls, list } = counted();
    const out = list.parse([{ a: 'x' }, { a: 'x' }, { a: 'y' }, { a: 'x' }]);
    expect(out).toEqual([
      { a: 'x', b: 1 },
      { a: 'x', b: 1 },
      { a: 'y', b: 1 },
      { a: 'x', b: 1 },
    ]);
    expect(calls.n).toBe(2);
    expect(new Set(out).size).toBe(4);
    out[0]!.b = 5;
    expect(out[1]!.b).toBe(1);
    // A second parse reads again.
    list.parse([{ a: 'x' }]);
    expect(calls.n).toBe(3);
  });

  it('reports every bad copy at its own path', () => {
    const { list } = counted();
    const r = list.safeParse([{ a: 'x', c: 1 }, { a: 'x' }, { a: 'x', c: 1 }]);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path)).toEqual([[0], [2]]);
  });

  it('reads what JSON text cannot tell apart every time', () => {
    const { calls, list } = counted();
    const when = new Date(0);
    const out = list.parse([{ a: when }, { a: when.toJSON() }, { a: Number.NaN }, { a: null }]);
    expect(calls.n).toBe(4);
    expect(out.map((v) => v.a)).toEqual([when, when.toJSON(), Number.NaN, null]);
  });

  it("leaves a configuration's steps as they were, with errors at each builder", () => {
    const yaml = (cmd: string) => `
workers: [{ name: w, password: p }]
builders:
  - { name: a, workers: [w], steps: [{ type: shell, command: ${cmd} }] }
  - { name: b, workers: [w], steps: [{ type: shell, command: ${cmd} }] }
`;
    const cfg = parseMasterConfig(yaml('"true"'));
    const [a, b] = cfg.builders.map((x) => x.steps[0]!);
    expect(a).toEqual(b);
    expect(a).not.toBe(b);
    expect(a).toMatchObject({ type: 'shell', command: 'true', timeout: 1200, haltOnFailure: false });
    let problems: readonly string[] = [];
    try {
      parseMasterConfig(yaml('{ bad: 1 }'));
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems.length).toBe(2);
    expect(problems[0]).toMatch(/builders.*0.*steps.*0.*command/);
    expect(problems[1]).toMatch(/builders.*1.*steps.*0.*command/);
  });
});
