// The start gate (services/master/builds/start-gate.ts), pure logic: at most `size` inside,
// the rest let in in the order they came, a place handed on as it is freed, and a release
// that counts once however often it is called.
import { describe, expect, it } from 'vitest';
import { StartGate } from '../../../services/master/builds/start-gate.js';

/** Whether the promise has settled by the time the microtasks queued so far have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('StartGate', () => {
  it('lets `size` in at once and the others in the order they came as places are freed', async () => {
    const gate = new StartGate(2);
    const a = await gate.enter();
    const b = await gate.enter();
    const c = gate.enter();
    const d = gate.enter();
    expect(await settled(c)).toBe(false);
    expect(gate.inside).toBe(2);
    b();
    expect(await settled(c)).toBe(true);
    expect(await settled(d)).toBe(false);
    a();
    expect(await settled(d)).toBe(true);
    expect(gate.inside).toBe(2);
    (await c)();
    (await d)();
    expect(gate.inside).toBe(0);
  });

  it('counts a release once, however often it is called', async () => {
    const gate = new StartGate(1);
    const a = await gate.enter();
    const b = gate.enter();
    a();
    a();
    expect(await settled(b)).toBe(true);
    const c = gate.enter();
    expect(await settled(c)).toBe(false);
    (await b)();
    expect(await settled(c)).toBe(true);
  });

  it('refuses a size that lets nobody through', () => {
    expect(() => new StartGate(0)).toThrow(RangeError);
  });
});
