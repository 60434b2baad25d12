// The master's `protocols` section: Buildbot's c['protocols'] shape, ports as numbers or
// Buildbot's endpoint strings, PB (what `buildbot-worker create-worker` speaks by default) among them.
import { describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { problems } from './problems.js';

describe('protocols', () => {
  it('is empty by default: Flotilla’s own protocol only, on WORKER_PORT', () => {
    expect(parseMasterConfig('title: t').protocols).toEqual({});
  });

  it("reads Buildbot's shape, with numbers and endpoint strings", () => {
    expect(parseMasterConfig('protocols: { msgpack_experimental_v7: { port: 9989 } }').protocols).toEqual({
      msgpack_experimental_v7: { port: 9989 },
    });
    expect(
      parseMasterConfig(`
protocols:
  flotilla: { port: "tcp:9990" }
  msgpack_experimental_v7: { port: "tcp:9989:interface=127.0.0.1" }
`).protocols,
    ).toEqual({ flotilla: { port: 9990 }, msgpack_experimental_v7: { port: 9989, host: '127.0.0.1' } });
    expect(parseMasterConfig('protocols: { pb: { port: "tcp:9989" } }').protocols).toEqual({
      pb: { port: 9989 },
    });
  });

  it('refuses unknown protocols, bad ports and one port for two protocols', () => {
    expect(problems('protocols: { pb: { port: 9989, extra: 1 } }')).toEqual([
      'protocols.pb: unknown key "extra"',
    ]);
    expect(problems('protocols: { xmpp: { port: 1 } }')).toEqual(['protocols: unknown key "xmpp"']);
    expect(problems('protocols: { msgpack_experimental_v7: { port: 70000 } }')).toEqual([
      'protocols.msgpack_experimental_v7.port: expected a port (0-65535) or "tcp:PORT[:interface=ADDRESS]"',
    ]);
    expect(problems('protocols: { msgpack_experimental_v7: { port: "unix:/x" } }')).toHaveLength(1);
    expect(problems('protocols: { msgpack_experimental_v7: { port: 1, extra: 2 } }')).toEqual([
      'protocols.msgpack_experimental_v7: unknown key "extra"',
    ]);
    expect(
      problems('protocols: { flotilla: { port: 9989 }, msgpack_experimental_v7: { port: 9989 } }'),
    ).toEqual(["protocols.msgpack_experimental_v7.port: port 9989 is the flotilla protocol's too"]);
    expect(
      problems('protocols: { msgpack_experimental_v7: { port: 9989 }, pb: { port: "tcp:9989" } }'),
    ).toEqual(["protocols.pb.port: port 9989 is the msgpack_experimental_v7 protocol's too"]);
  });

  it('lets try_userpass users log in on the PB port only, each name once', () => {
    const base = `
workers: [{ name: w1, password: pw }]
builders: [{ name: b1, workers: [w1], steps: [{ type: shell, command: 'true' }] }]
change_sources: [{ type: pb }]
`;
    const tryOn = (extra: string) =>
      `${base}schedulers: [{ type: try_userpass, name: t, builders: [b1], ${extra} }]`;
    expect(problems(tryOn('userpass: [[alice, pw]]'))).toEqual([
      'change_sources[0]: a pb change source needs protocols.pb (the port it logs in on)',
      'schedulers[0]: a try_userpass scheduler needs protocols.pb (the port it logs in on)',
    ]);
    const pb = `protocols: { pb: { port: 9989 } }\n${base}`;
    const withPb = (extra: string) =>
      `${pb}schedulers: [{ type: try_userpass, name: t, builders: [b1], ${extra} }]`;
    expect(problems(withPb('userpass: [[w1, a], [change, b], [bob, c], [bob, d]], port: 8010'))).toEqual([
      "schedulers[0].port: must be protocols.pb's port (9989)",
      'schedulers[0].userpass[0]: "w1" is a worker\'s name',
      'schedulers[0].userpass[1]: "change" logs in on the PB port already',
      'schedulers[0].userpass[3]: "bob" logs in on the PB port already',
    ]);
    const ok = parseMasterConfig(withPb('userpass: [[bob, c]], port: "tcp:9989"')).schedulers[0];
    expect(ok).toMatchObject({ type: 'try_userpass', userpass: [['bob', 'c']], port: { port: 9989 } });
  });
});
