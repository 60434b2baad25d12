// A build whose command names a Vault secret (Buildbot's SecretInVault): the master reads it
// from Vault (a server on 127.0.0.1 answering as Vault's KV v2 API documents, refusing a
// request without the token) as the build starts, the worker gets the value, the log shows
// <name>; a value changed in Vault is what the next build gets.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Results } from '../../../services/core/results.js';
import { Forge } from '../../helpers/forge.js';
import { type InProcessMaster, ScriptedWorker, Stage } from '../in-process.js';
import { finishedBuild, logs, request } from './lib.js';

const TOKEN = 'hvs.build-token';
let value = 'first-Vault-value';
let stage: Stage;
let vault: Forge;
let m: InProcessMaster;
let w1: ScriptedWorker;

beforeAll(async () => {
  vault = await Forge.start(
    (r) =>
      r.headers['x-vault-token'] === TOKEN && r.url === '/v1/secret/data/ci' ? [] : [`bad request ${r.url}`],
    () => ({ data: { data: { deploy: value }, metadata: { version: 1 } } }),
  );
  stage = await Stage.open();
  m = await stage.master(
    'vault',
    `
log_compression: none
secrets:
  - { type: vault, vaultServer: "${vault.url}", vaultToken_env: VAULT_TOKEN, apiVersion: 2 }
workers:
  - { name: w1, password: x }
builders:
  - name: deploys
    workers: [w1]
    steps:
      - { type: shell, name: use, command: ["echo", "%(secret:ci/deploy)s"] }
`,
    { env: { VAULT_TOKEN: TOKEN } },
  );
  w1 = m.workers.connect(new ScriptedWorker('w1'));
}, 60_000);
afterAll(async () => {
  await m?.stop();
  await stage?.close();
  await vault?.close();
});

it('reaches the worker, read from Vault as each build starts, and the log shows <name>', async () => {
  for (const expected of ['first-Vault-value', 'rotated-Vault-value']) {
    value = expected;
    const { brid } = await request(stage, 'deploys');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.SUCCESS);
    expect(w1.commands.at(-1)!.command).toEqual(['echo', expected]);
    expect((await logs(stage, build.id, 'use')).stdio).toBe('o<ci/deploy>');
  }
  expect(vault.received.map((r) => r.status)).toEqual([200, 200]);
});
