// The change hooks the API pods answer (base, github, gitlab, bitbucket): changes POSTed to them over HTTP.
import { z } from 'zod';
import { regularExpression } from './regular-expression.js';
import { credentialUrl } from './urls.js';

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

// Where a hook's secret is read from: an environment variable or a file, at most one.
const secretSource = {
  secret_env: z.string().min(1).optional(),
  secret_file: z.string().min(1).optional(),
};

const atMostOne =
  (a: string, b: string) =>
  (o: Record<string, unknown>): boolean =>
    o[a] === undefined || o[b] === undefined;

export const changeHooks = z
  .object({
    base: z
      .object({ enabled: z.boolean().default(false), auth: baseAuth.optional() })
      .strict()
      .optional(),
    github: z
      .object({
        ...secretSource,
        codebase: z.string().optional(),
        // pull_request events: GitHub's API is asked for the head commit's message and the
        // files (with the token, when one is set), and the change is on
        // refs/pull/<number>/<pullrequest_ref>.
        github_api_endpoint: credentialUrl().default('https://api.github.com'),
        token_env: z.string().min(1).optional(),
        token_file: z.string().min(1).optional(),
        pullrequest_ref: z.string().min(1).default('merge'),
        // Regular expressions: a head commit message that one matches makes no change.
        skips: z
          .array(regularExpression)
          .default([String.raw`\[ *skip *ci *\]`, String.raw`\[ *ci *skip *\]`]),
        // Payload fields (github.<path>, fnmatch patterns) that become change properties.
        github_property_whitelist: z.array(z.string()).default([]),
      })
      .strict()
      .refine(atMostOne('secret_env', 'secret_file'), {
        message: 'expected at most one of secret_env, secret_file',
      })
      .refine(atMostOne('token_env', 'token_file'), {
        message: 'expected at most one of token_env, token_file',
      })
      .optional(),
    // POST /change_hook/gitlab: push, tag push, merge request and merge request note events.
    // With a secret, X-Gitlab-Token must be it (GitLab's "secret token").
    gitlab: z
      .object(secretSource)
      .strict()
      .refine(atMostOne('secret_env', 'secret_file'), {
        message: 'expected at most one of secret_env, secret_file',
      })
      .optional(),
    // POST /change_hook/bitbucket: Bitbucket's POST service payload (Buildbot's `bitbucket`
    // dialect). It has no secret, as in Buildbot: keep it behind a proxy that authenticates.
    bitbucket: z.object({}).strict().optional(),
  })
  .strict();
