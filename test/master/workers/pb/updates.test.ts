// The pure parts of PbWorkerConnection: reading a worker's `update` and `complete` (shapes as
// buildbot-worker 3.7 sends them, test/fixtures/pb/session.json), plain values to jelly and
// back, and getWorkerInfo's fallbacks for workers older than getWorkerInfo, against a
// client-side broker that plays such a worker over an in-memory link.
import { describe, expect, it } from 'vitest';
import { LocalObject, type RemoteMethod } from '../../../../services/master/workers/pb/broker.js';
import { dict, type JellyValue, RemoteFailure, Tuple } from '../../../../services/master/workers/pb/jelly.js';
import { failureText, outputBytes, readUpdates } from '../../../../services/master/workers/pb/updates.js';
import { fromJelly, toJelly } from '../../../../services/master/workers/pb/values.js';
import { FALLBACK_MESSAGE, pbWorkerInfo } from '../../../../services/master/workers/pb/worker-info.js';
import { linkedRoot } from './linked.js';

const upd = (entries: Record<string, JellyValue>) => [dict(entries), 0];

describe('PB updates', () => {
  it('reads output, named logs and the values the master uses, in order', () => {
    const pieces = readUpdates([
      upd({ header: 'in dir /w/b1\n' }),
      upd({ stdout: Buffer.from('one\n') }),
      upd({ stderr: 'two\n' }),
      upd({ log: new Tuple('build.log', 'line\n') }),
      upd({ rc: 3 }),
      upd({ elapsed: 0.25 }),
      upd({ stat: new Tuple(16877, 1, 2) }),
      upd({ somethingElse: 'dropped' }),
    ]);
    expect(pieces).toEqual([
      { output: 'h', text: 'in dir /w/b1\n' },
      { output: 'o', text: 'one\n' },
      { output: 'e', text: 'two\n' },
      { output: 'o', text: 'line\n', log: 'build.log' },
      { key: 'rc', value: 3 },
      { key: 'elapsed', value: 0.25 },
      { key: 'stat', value: [16877, 1, 2] },
    ]);
    expect(outputBytes(pieces)).toBe(26);
  });

  it('refuses updates of the wrong shape', () => {
    expect(() => readUpdates('x')).toThrow(/not a list/);
    expect(() => readUpdates([[1, 0]])).toThrow(/pair/);
    expect(() => readUpdates([upd({ stdout: 5 })])).toThrow(/stdout is not text/);
    expect(() => readUpdates([upd({ log: 'x' })])).toThrow(/log is not/);
  });

  it('turns complete’s failure into text', () => {
    expect(failureText(null)).toBeNull();
    expect(failureText(new RemoteFailure('builtins.OSError', 'no such file'))).toBe('OSError: no such file');
    expect(failureText(new RemoteFailure('buildbot_worker.exceptions.AbandonChain', ''))).toBe(
      'AbandonChain',
    );
  });
});

describe('PB values', () => {
  it('sends objects as dicts and reads dicts back as objects', () => {
    const j = toJelly({ command: ['ls', '-l'], env: { A: 'b', B: null }, timeout: undefined, keep: true });
    expect(j).toEqual(
      new Map<string, JellyValue>([
        ['command', ['ls', '-l']],
        [
          'env',
          new Map<string, JellyValue>([
            ['A', 'b'],
            ['B', null],
          ]),
        ],
        ['keep', true],
      ]),
    );
    expect(fromJelly(dict({ a: Buffer.from('x'), t: new Tuple(1, 2) }))).toEqual({ a: 'x', t: [1, 2] });
    expect(() => toJelly(() => 1)).toThrow(/cannot send a function/);
  });

  it('reads a worker’s key __proto__ as a key, leaving the prototype alone', () => {
    const o = fromJelly(new Map<string, JellyValue>([['__proto__', dict({ basedir: '/evil' })]])) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(o.basedir).toBeUndefined();
    expect(Object.keys(o)).toEqual(['__proto__']);
  });
});

/** A worker older than getWorkerInfo, with only these methods on its mind. */
const olderWorker = (methods: Record<string, RemoteMethod>) => linkedRoot(new LocalObject('Bot', methods));

describe('getWorkerInfo over PB', () => {
  it('asks getWorkerInfo of a current worker', async () => {
    const mind = olderWorker({ getWorkerInfo: () => dict({ admin: 'a', version: '3.7.0' }) });
    expect(await pbWorkerInfo(mind)).toEqual({ admin: 'a', version: '3.7.0' });
  });

  it('falls back to getSlaveInfo, renaming slave_commands, after telling the worker', async () => {
    const printed: JellyValue[] = [];
    const mind = olderWorker({
      print: (_a, kw) => {
        printed.push(kw.get('message') ?? null);
        return null;
      },
      getSlaveInfo: () => dict({ admin: 'old', slave_commands: dict({ shell: '3.1' }) }),
    });
    expect(await pbWorkerInfo(mind)).toEqual({ admin: 'old', worker_commands: { shell: '3.1' } });
    expect(printed).toEqual([FALLBACK_MESSAGE]);
  });

  it('asks getCommands and getVersion of the oldest workers, skipping what they lack', async () => {
    const mind = olderWorker({
      print: () => null,
      getCommands: () => dict({ shell: '2.0' }),
      getVersion: () => '0.8.0',
    });
    expect(await pbWorkerInfo(mind)).toEqual({ worker_commands: { shell: '2.0' }, version: '0.8.0' });
    expect(await pbWorkerInfo(olderWorker({ print: () => null }))).toEqual({});
  });

  it('fails on any other error, as Buildbot does', async () => {
    const mind = olderWorker({
      getWorkerInfo: () => {
        throw new Error('broken');
      },
    });
    await expect(pbWorkerInfo(mind)).rejects.toBeInstanceOf(RemoteFailure);
  });
});
