// The swap a configuration reload makes (services/api/http/app-switch.ts), with two Fastify
// applications behind one listening socket: from the swap on, every request goes to the new
// one; a request the old one was answering is answered by it in full, and only then is the
// old one closed.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { AppSwitch } from '../../services/api/http/app-switch.js';

let front: AppSwitch | null = null;
afterAll(async () => {
  await front?.close();
});

/** `hold`: /slow says it started, then answers once `until` resolves. */
function app(
  name: string,
  hold?: { started: () => void; until: Promise<void> },
): { a: FastifyInstance; closed: boolean } {
  const a = Fastify();
  const made = { a, closed: false };
  a.addHook('onClose', async () => {
    made.closed = true;
  });
  a.get('/who', async () => name);
  a.get('/slow', async () => {
    hold?.started();
    await hold?.until;
    return `${name}, at last`;
  });
  return made;
}

describe('an application swapped in', () => {
  it('answers the next request, while the old one finishes what it had, then closes', async () => {
    let release = () => {};
    let started = () => {};
    const until = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const [a, b] = [app('a', { started, until }), app('b')];
    await Promise.all([a.a.ready(), b.a.ready()]);
    front = new AppSwitch(a.a);
    await front.listen(0, '127.0.0.1');
    const { port } = front.server.address() as { port: number };
    const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).text();

    expect(await get('/who')).toBe('a');
    const slow = get('/slow');
    await slowStarted;
    const swapped = front.swap(b.a);
    expect(await get('/who')).toBe('b');
    expect(a.closed).toBe(false);
    release();
    expect(await slow).toBe('a, at last');
    await swapped;
    expect(a.closed).toBe(true);
    expect(b.closed).toBe(false);
  });
});
