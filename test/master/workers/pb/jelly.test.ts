// Jelly against what a real Buildbot 3.7 master and worker sent (test/fixtures/pb): every
// jellied part of every message unjellies to the expected values and jellies back to the same
// bytes, random values round-trip, and every type outside Buildbot's subset is refused.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BananaItem, encodeBanana } from '../../../../services/master/workers/pb/banana.js';
import { PbProtocolError } from '../../../../services/master/workers/pb/errors.js';
import type {
  JellyKey,
  JellyRefs,
  JellyValue,
  PbReference,
} from '../../../../services/master/workers/pb/jelly.js';
import { jelly, RemoteFailure, Tuple, unjelly } from '../../../../services/master/workers/pb/jelly.js';
import { expressions, recording, type Side } from './recorded.js';

interface Ref extends PbReference {
  kind: 'remote' | 'local';
  id: number;
}
const refs: JellyRefs = {
  remote: (id) => ({ pbReference: true, kind: 'remote', id }) as Ref,
  local: (id) => ({ pbReference: true, kind: 'local', id }) as Ref,
  out: (r) => [Buffer.from((r as Ref).kind), (r as Ref).id],
};

const str = (b: BananaItem | undefined) => Buffer.from(b as Uint8Array).toString();

/** The jellied parts of a broker message (pb.py: message/cachemessage args, answer, error). */
function jellied(m: BananaItem[]): BananaItem[] {
  switch (str(m[0])) {
    case 'message':
    case 'cachemessage':
      return [m[5] as BananaItem, m[6] as BananaItem];
    case 'answer':
    case 'error':
      return [m[2] as BananaItem];
    default:
      return [];
  }
}

function code(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(PbProtocolError);
    return (err as PbProtocolError).code;
  }
  return 'accepted';
}

const b = (s: string) => Buffer.from(s);

describe('jelly', () => {
  const values = new Map<string, JellyValue[]>();
  for (const name of ['session', 'login-wrong-password'] as const) {
    for (const side of ['master', 'worker'] as Side[]) {
      it(`unjellies every part of every message the ${side} sent in ${name}, and jellies it back to the same bytes`, () => {
        const out: JellyValue[] = [];
        for (const m of expressions(recording(name), side).slice(1)) {
          for (const part of jellied(m as BananaItem[])) {
            const v = unjelly(part, refs);
            out.push(v);
            if (v instanceof RemoteFailure) continue; // Flotilla's failures carry no Python traceback
            expect(encodeBanana(jelly(v, refs), true).equals(encodeBanana(part, true))).toBe(true);
          }
        }
        expect(out.length).toBeGreaterThan(1);
        values.set(`${name}/${side}`, out);
      });
    }
  }

  it('gives the values Buildbot meant', () => {
    const worker = values.get('session/worker') ?? [];
    const master = values.get('session/master') ?? [];
    const info = worker.find((v) => v instanceof Map && v.has('admin')) as Map<JellyKey, JellyValue>;
    expect(info.get('admin')).toBe('fixture <fixture@example.invalid>\n');
    expect(info.get('host')).toBe('fixture host\n');
    // setBuilderList's argument: a list of (name, builddir) tuples.
    const builders = master.find((v) => v instanceof Tuple && Array.isArray(v.items[0])) as Tuple;
    expect(builders).toEqual(new Tuple([new Tuple('b1', 'b1')]));
    // startCommand: (remote command, id, name, args).
    const start = master.find((v) => v instanceof Tuple && v.items[2] === 'shell') as Tuple;
    expect(start.items[0]).toMatchObject({ kind: 'remote' });
    const args = start.items[3] as Map<JellyKey, JellyValue>;
    expect(args.get('workdir')).toBe('build');
    expect(args.get('want_stdout')).toBe(true);
    // An update: ([[{stdout: 'hello\n'}, 0]],)
    expect(worker).toContainEqual(new Tuple([[new Map([['stdout', 'hello\n']]), 0]]));
    // The uploaded bytes are bytes, not text.
    expect(worker).toContainEqual(new Tuple(b('fixture download\n')));
    const refused = (values.get('login-wrong-password/master') ?? []).find((v) => v instanceof RemoteFailure);
    expect(refused).toMatchObject({ type: 'twisted.cred.error.UnauthorizedLogin', value: '' });
    expect((refused as RemoteFailure).parents).toContain('twisted.cred.error.UnauthorizedLogin');
  });

  it('round-trips the values Buildbot exchanges', () => {
    const key = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
    const value = fc.letrec<{ v: JellyValue }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.double({ noNaN: true }).filter((d) => !Number.isInteger(d)),
        fc.string(),
        fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.array(tie('v'), { maxLength: 4 }).map((a) => new Tuple(...a)),
        fc.array(fc.tuple(key, tie('v')), { maxLength: 4 }).map((e) => new Map<JellyKey, JellyValue>(e)),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        expect(unjelly(jelly(v, refs), refs)).toEqual(v);
      }),
      { numRuns: 300 },
    );
    const f = unjelly(jelly(new RemoteFailure('x.Y', 'why', ['x.Y', 'builtins.Exception']), refs), refs);
    expect(f).toEqual(new RemoteFailure('x.Y', 'why', ['x.Y', 'builtins.Exception']));
  });

  it('resolves references within one message and refuses everything outside the subset', () => {
    const shared = [b('reference'), 1, [b('list'), 7]];
    expect(unjelly([b('tuple'), shared, [b('dereference'), 1]], refs)).toEqual(new Tuple([7], [7]));
    for (const t of [
      'instance',
      'class',
      'module',
      'function',
      'set',
      'frozenset',
      'datetime',
      'decimal',
      'cache',
      'cached',
      'lcache',
      'persistent',
      'method',
      'os.system',
      'buildbot.Other',
    ]) {
      expect(code(() => unjelly([b(t), b('x')], refs))).toBe('PB_JELLY_UNKNOWN_TYPE');
    }
    expect(code(() => unjelly([1, 2], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('unicode'), Buffer.from([0xff])], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('boolean'), b('yes')], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('None'), 1], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('dereference'), 5], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('reference'), 1, [b('reference'), 1, 2]], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('remote'), b('x')], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('dictionary'), [[b('list')], 1]], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('dictionary'), [1]], refs))).toBe('PB_JELLY_MALFORMED');
    expect(code(() => unjelly([b('twisted.spread.pb.CopyableFailure'), 1], refs))).toBe('PB_JELLY_MALFORMED');
  });
});
