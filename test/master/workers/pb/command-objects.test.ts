// The objects a PbWorkerConnection hands a worker for one command (RemoteCommand's update and
// complete), driven by a client broker that plays buildbot-worker's side over an in-memory
// link, for what a real worker never does on purpose: an update acknowledged only once its
// output is stored, an update of the wrong shape, a call after the command ended, output the
// sink cannot store (the command is interrupted and ends as lost), and a worker whose every
// builder is busy.
import { describe, expect, it } from 'vitest';
import type { OutputStream } from '../../../../services/core/protocol/messages.js';
import { LocalObject, type RemoteReference } from '../../../../services/master/workers/pb/broker.js';
import { PbWorkerConnection } from '../../../../services/master/workers/pb/connection.js';
import {
  dict,
  type JellyValue,
  RemoteFailure,
  type Tuple,
} from '../../../../services/master/workers/pb/jelly.js';
import { waitFor } from '../../../helpers/wait.js';
import { linkedRoot } from './linked.js';

interface Started {
  command: RemoteReference;
  id: string;
  name: string;
}

/** A master-side connection to a client broker that plays a worker with builders b1 and b2. */
async function fakeWorker() {
  const started: Started[] = [];
  const interrupted: string[] = [];
  const builder = new LocalObject('WorkerForBuilder', {
    startCommand: ([command, id, name]) => {
      started.push({ command: command as RemoteReference, id: id as string, name: name as string });
      return null;
    },
    interruptCommand: ([id]) => {
      interrupted.push(id as string);
      return null;
    },
  });
  const mind = linkedRoot(
    new LocalObject('Bot', {
      setBuilderList: ([wanted]) =>
        new Map((wanted as Tuple[]).map((t) => [t.items[0] as string, builder as unknown as JellyValue])),
    }),
  );
  const conn = new PbWorkerConnection('w', mind, {
    pause: () => {},
    resume: () => {},
    close: () => {},
  });
  conn.details = { basedir: '/w' };
  await conn.setBuilderList([
    ['b1', 'b1'],
    ['b2', 'b2'],
  ]);
  return { conn, started, interrupted };
}

const update = (entries: Record<string, JellyValue>) => [[dict(entries), 0]];

describe('a PB command’s objects', () => {
  it('acknowledge an update only once stored, refuse a malformed one, and refuse calls after complete', async () => {
    const { conn, started } = await fakeWorker();
    const stored: [OutputStream, string][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const ended = conn.run({ command: 'make', workdir: 'b1' }, async (s, t) => {
      await gate;
      stored.push([s, t]);
    });
    await waitFor('startCommand', () => started.length === 1);
    const { command, name } = started[0] as Started;
    expect(name).toBe('shell');
    let acked = false;
    const ack = command.callRemote('update', update({ stdout: 'built\n' })).then((v) => {
      acked = true;
      return v;
    });
    const bad = command.callRemote('update', 'not a list').catch((e: unknown) => e);
    expect(await bad).toBeInstanceOf(RemoteFailure);
    expect(acked).toBe(false);
    release();
    expect(await ack).toBe(0);
    await command.callRemote('update', update({ rc: 0 }));
    expect(await command.callRemote('complete', null)).toBeNull();
    expect(await ended).toMatchObject({ rc: 0, interrupted: false });
    expect(stored).toEqual([
      ['o', 'built\n'],
      ['h', 'program finished with exit code 0\n'],
    ]);
    const late = await command.callRemote('update', update({ stdout: 'late\n' })).catch((e: unknown) => e);
    expect((late as RemoteFailure).value).toContain('this command has ended');
    expect(conn.running).toBe(0);
  });

  it('interrupt a command whose output cannot be stored, and end it as lost', async () => {
    const { conn, started, interrupted } = await fakeWorker();
    const ended = conn.run({ command: 'make', workdir: 'b1' }, async () => {
      throw new Error('database gone');
    });
    await waitFor('startCommand', () => started.length === 1);
    const { command, id } = started[0] as Started;
    const refused = await command.callRemote('update', update({ stdout: 'x\n' })).catch((e: unknown) => e);
    expect((refused as RemoteFailure).value).toContain('database gone');
    await waitFor('the interrupt', () => interrupted.includes(id));
    await command.callRemote('complete', null);
    expect(await ended).toEqual({ lost: true, reason: 'output could not be stored: database gone' });
  });

  it('run one command per builder and refuse one more with a clear line', async () => {
    const { conn, started } = await fakeWorker();
    const sink = async () => {};
    void conn.run({ command: 'a', workdir: 'b1' }, sink);
    void conn.run({ command: 'b', workdir: 'b1' }, sink);
    const lines: string[] = [];
    const third = await conn.run({ command: 'c', workdir: 'b1' }, async (_s, t) => {
      lines.push(t);
    });
    expect(third).toMatchObject({ rc: null });
    expect(lines).toEqual(['the worker has no builder free to run a command\n']);
    await waitFor('two commands started', () => started.length === 2);
    expect(conn.running).toBe(2);
  });
});
