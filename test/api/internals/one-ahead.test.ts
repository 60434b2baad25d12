// A download's spans fetched one ahead (services/api/read/one-ahead.ts): rows in order, the
// next span's fetch sent before this one's rows are taken and never two ahead, a failed
// fetch failing the download where its span is wanted, and one ahead of a download that
// ended early never an unhandled rejection. Pure logic: the fetch is a function here.
import { describe, expect, it } from 'vitest';
import { oneAhead } from '../../../services/api/read/one-ahead.js';

describe('oneAhead', () => {
  it('yields the rows in order, with one fetch ahead and never two', async () => {
    const asked: number[] = [];
    const seen: string[] = [];
    const rows = oneAhead([0, 1, 2], async (g) => {
      asked.push(g);
      return [`${g}a`, `${g}b`];
    });
    for await (const row of rows) {
      seen.push(row);
      // Taking a span's rows, the next span is asked and the one after it not yet.
      const span = Number(row[0]);
      expect(asked).toEqual([0, 1, 2].slice(0, Math.min(3, span + 2)));
    }
    expect(seen).toEqual(['0a', '0b', '1a', '1b', '2a', '2b']);
  });

  it('fails where the span that failed is wanted', async () => {
    const seen: string[] = [];
    const rows = oneAhead([0, 1], async (g) => {
      if (g === 1) throw new Error('store away');
      return [`${g}`];
    });
    await expect(
      (async () => {
        for await (const row of rows) seen.push(row);
      })(),
    ).rejects.toThrow('store away');
    expect(seen).toEqual(['0']);
  });

  it('leaves no unhandled rejection when the download ends before the span ahead', async () => {
    const unhandled: unknown[] = [];
    const note = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', note);
    try {
      let fail!: (err: Error) => void;
      const rows = oneAhead([0, 1], (g) =>
        g === 0 ? Promise.resolve(['0']) : new Promise<string[]>((_, reject) => (fail = reject)),
      );
      for await (const _ of rows) break;
      fail(new Error('store away'));
      // Two turns of the event loop: an unhandled rejection is reported within one.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
