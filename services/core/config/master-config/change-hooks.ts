// The change hooks the API pods answer (base, github): changes POSTed to them over HTTP.
import { z } from 'zod';

// Change hooks on the API pods (Buildbot's change_hook_dialects): POST /change_hook/base
// when base.enabled; POST /change_hook/github when `github` is present, its HMAC secret read
// from an environment variable or a file (at most one; with neither, signatures are not
// checked), and `codebase` given to the changes it makes.
// The base hook takes a change, properties included, from whoever can reach the API, and
// those properties reach the builds' commands (docs/security.md). `base.auth` makes it ask
// for HTTP Basic credentials (Buildbot's www change_hook_auth, for this dialect: a user and
// a password, the password read from an environment variable or a file); without it the API
// warns at every start.
const baseAuth = z
  .object({
    username: z.string().min(1),
    password_env: z.string().min(1).optional(),
    password_file: z.string().min(1).optional(),
  })
  .strict()
  .refine((a) => (a.password_env === undefined) !== (a.password_file === undefined), {
    message: 'expected exactly one of password_env, password_file',
  });

export const changeHooks = z
  .object({
    base: z
      .object({ enabled: z.boolean().default(false), auth: baseAuth.optional() })
      .strict()
      .optional(),
    github: z
      .object({
        secret_env: z.string().min(1).optional(),
        secret_file: z.string().min(1).optional(),
        codebase: z.string().optional(),
      })
      .strict()
      .refine((g) => g.secret_env === undefined || g.secret_file === undefined, {
        message: 'expected at most one of secret_env, secret_file',
      })
      .optional(),
  })
  .strict();
