// `type: http`: Buildbot's HttpStatusPush (services/master/reporters/kinds/http.ts).
import { z } from 'zod';
import { common, reporterSchema, secret } from './kind.js';

export const http = reporterSchema(
  z
    .object({
      type: z.literal('http'),
      ...common,
      serverUrl: z.string().url(),
      headers: z.record(z.string()).default({}),
      auth: z
        .object({ user: z.string().min(1), ...secret('password') })
        .strict()
        .optional(),
      // Ours (Buildbot has none): the body's HMAC-SHA256, hex, in X-Flotilla-Signature-256.
      ...secret('hmac_secret'),
    })
    .strict(),
  (r, checks) => {
    checks.once('hmac_secret', false);
    if (r.auth) checks.once('password', true, 'auth');
  },
);
