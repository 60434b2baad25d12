// Where `%(secret:NAME)s` finds its value: providers asked in order, the first that has the
// name wins (Buildbot's SecretManager over c['secretsProviders']).
// - directory: Buildbot's SecretInAFile: one file per secret in `dirname`, named NAME plus
//   one of `suffixes`; its trailing newlines stripped unless `strip: false`. As Buildbot
//   does, a file that group or others may read is refused when the master loads.
// - environment: Flotilla's own (Buildbot 3.7 has no such provider): NAME from the master's
//   environment variable `prefix` + NAME. The prefix keeps the master's own variables
//   (DATABASE_URL...) out of reach of a configuration's templates.
import { z } from 'zod';

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

export const secretsProvider = z.discriminatedUnion('type', [directory, environment]);
