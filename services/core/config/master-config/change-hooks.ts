// The change hooks the API pods answer (base, github): changes POSTed to them over HTTP.
import { z } from 'zod';

// Change hooks on the API pods (Buildbot's change_hook_dialects): POST /change_hook/base
// when base.enabled (it has no authentication: enable it only behind something that has);
// POST /change_hook/github when `github` is present, its HMAC secret read from an
// environment variable or a file (at most one; with neither, signatures are not checked),
// and `codebase` given to the changes it makes.
export const changeHooks = z
  .object({
    base: z
      .object({ enabled: z.boolean().default(false) })
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
