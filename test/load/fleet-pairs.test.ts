// Phase S's pairs (load/fleet/pairs.ts): pgbench.sh's rates read back as it prints them, and
// each warm burst set against the better pgbench round on either side of it.
import { describe, expect, it } from 'vitest';
import { best, pairLines, parseRounds } from '../../load/fleet/pairs.js';

const OUT = `390000 requests; load average (1 min) before: 1.52
-M prepared, clients 2: tps = 655.432100 (without initial connection time) PostgreSQL CPU a start 2.53 ms; load average (1 min) 3.10
-M prepared, clients 3: tps = 562.500000 (without initial connection time) PostgreSQL CPU a start unknown; load average (1 min) 3.40
`;

describe('pgbench rounds', () => {
  it("reads each client count's rate and PostgreSQL's CPU a start", () => {
    const r = parseRounds(OUT);
    expect(r).toEqual([
      { clients: 2, tps: 655.4321, pgMs: 2.53 },
      { clients: 3, tps: 562.5, pgMs: null },
    ]);
    expect(best(r)).toBe(655.4321);
  });

  it('refuses output without a rate (pgbench aborted) rather than taking a limit of nothing', () => {
    expect(() => parseRounds('-M prepared, clients 2: pgbench: error: client 0 aborted\n')).toThrow(
      /printed no rate/,
    );
  });
});

describe('pairs', () => {
  it('sets each burst against the better of its two neighbours, and leaves the first out of the median', () => {
    const lines = pairLines([100, 300, 200, 250], [1000, 600, 500, 400, 800]);
    expect(lines).toContain('| 1 (first, not counted) | 100.0 | 1000.0, 600.0 | 10.0% |');
    expect(lines).toContain('| 2 | 300.0 | 600.0, 500.0 | 50.0% |');
    expect(lines).toContain('| 3 | 200.0 | 500.0, 400.0 | 40.0% |');
    expect(lines).toContain('| 4 | 250.0 | 400.0, 800.0 | 31.3% |');
    expect(lines.at(-1)).toBe(
      'warm bursts against the limit of their own minutes: median 40.0%, lowest 31.3%, highest 50.0% (goal: 50%)',
    );
  });
});
