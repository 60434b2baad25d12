// Where `%(secret:NAME)s` finds its value: providers asked in order, the first that has the
// name wins (Buildbot's SecretManager over c['secretsProviders']).
// - directory: Buildbot's SecretInAFile: one file per secret in `dirname`, named NAME plus
//   one of `suffixes`; its trailing newlines stripped unless `strip: false`. As Buildbot
//   does, a file that group or others may read is refused when the master loads.
// - environment: Flotilla's own (Buildbot 3.7 has no such provider): NAME from the master's
//   environment variable `prefix` + NAME. The prefix keeps the master's own variables
//   (DATABASE_URL...) out of reach of a configuration's templates.
// - pass: Buildbot's SecretInPass: NAME is an entry of the password store (Debian's `pass`,
//   with gpg), in `dirname` or pass's default; its first line. A key with a passphrase: the
//   passphrase from an environment variable or a file (Buildbot's gpgPassphrase).
// - vault: Buildbot's SecretInVault: NAME is `path` or `path/key` (key default `value`) in
//   Vault's KV secrets engine at `secretsmount` (default `secret`), version 1 or 2
//   (`apiVersion`), read with the token from an environment variable or a file.
// pass and Vault are read as a build starts, for the secrets its builder's templates name.
import { z } from 'zod';
import { credentialUrl } from './urls.js';

const directory = z
  .object({
    type: z.literal('directory'),
    dirname: z.string().min(1),
    suffixes: z.array(z.string()).min(1).default(['']),
    strip: z.boolean().default(true),
  })
  .strict();

const environment = z
  .object({
    type: z.literal('environment'),
    prefix: z.string().min(1).default('FLOTILLA_SECRET_'),
  })
  .strict();

const pass = z
  .object({
    type: z.literal('pass'),
    dirname: z.string().min(1).optional(),
    gpgPassphrase_env: z.string().min(1).optional(),
    gpgPassphrase_file: z.string().min(1).optional(),
  })
  .strict();

const vault = z
  .object({
    type: z.literal('vault'),
    vaultServer: credentialUrl(),
    vaultToken_env: z.string().min(1).optional(),
    vaultToken_file: z.string().min(1).optional(),
    secretsmount: z.string().min(1).default('secret'),
    apiVersion: z.union([z.literal(1), z.literal(2)]).default(1),
  })
  .strict();

// A discriminated union takes no refinements: "exactly one" of the token's places is checked
// on the union.
export const secretsProvider = z
  .discriminatedUnion('type', [directory, environment, pass, vault])
  .superRefine((p, ctx) => {
    const places = (a: string | undefined, b: string | undefined) =>
      (a !== undefined ? 1 : 0) + (b !== undefined ? 1 : 0);
    if (p.type === 'pass' && places(p.gpgPassphrase_env, p.gpgPassphrase_file) > 1)
      ctx.addIssue({
        code: 'custom',
        message: 'expected at most one of gpgPassphrase_env, gpgPassphrase_file',
      });
    if (p.type === 'vault' && places(p.vaultToken_env, p.vaultToken_file) !== 1)
      ctx.addIssue({ code: 'custom', message: 'expected exactly one of vaultToken_env, vaultToken_file' });
  });
