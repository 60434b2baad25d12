// What a report carries of a build's secrets (issue 28, item 5): nothing. A build that sets a
// property from a command's output holding a secret, and a step whose state string and link
// name hold one, is reported by the HTTP reporter with `<NAME>` in their place, since a
// report is made from what the build stored, and that is redacted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forge } from '../../helpers/forge.js';
import { waitFor } from '../../helpers/wait.js';
import { request } from '../builds/lib.js';
import { ScriptedWorker, Stage } from '../in-process.js';

const TOKEN = 'rep0rted-s3cret';

const CONFIG = (url: string) => `
log_compression: none
buildbotURL: http://flotilla.test/
secrets: [{ type: environment, prefix: TEST_SECRET_ }]
workers: [{ name: w1, password: x }]
builders:
  - name: leaky
    workers: [w1]
    steps:
      - { type: set_property, property: captured, command: "echo %(secret:token)s" }
      - type: shell
        name: linked
        command: "echo %(secret:token)s"
        urls: [{ name: "%(secret:token)s", url: "https://example.test/%(secret:token)s" }]
reporters:
  - type: http
    serverUrl: ${url}/all
`;

let stage: Stage;
let forge: Forge;
beforeAll(async () => {
  [stage, forge] = await Promise.all([
    Stage.open(),
    Forge.start(
      () => [],
      () => ({}),
    ),
  ]);
}, 60_000);
afterAll(async () => {
  await stage?.close();
  await forge?.close();
});

describe('a report of a build that used a secret', () => {
  it('carries <NAME> where the secret was: properties, state strings', async () => {
    const m = await stage.master('secrets-report', CONFIG(forge.url), {
      env: { TEST_SECRET_token: TOKEN },
      timing: { reportBackoffMs: 50 },
    });
    m.workers.connect(new ScriptedWorker('w1'));
    await request(stage, 'leaky');
    await waitFor('the finished build reported', () =>
      forge.received.some((r) => (r.body as { complete?: boolean } | undefined)?.complete === true),
    );
    const end = forge.received.find((r) => (r.body as { complete?: boolean }).complete)!;
    expect(end.body).toMatchObject({ properties: { captured: ['<token>', 'SetPropertyFromCommand Step'] } });
    expect(forge.received.filter((r) => r.raw.includes(TOKEN))).toEqual([]);
    await m.stop();
  });
});
