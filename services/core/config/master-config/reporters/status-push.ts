// The forges' commit statuses (Buildbot's GitHubStatusPush and GitLabStatusPush): one shape,
// a token required.
import { z } from 'zod';
import { common, reporterSchema, secret } from './kind.js';

export const statusPush = <T extends string>(type: T) =>
  reporterSchema(
    z
      .object({
        type: z.literal(type),
        ...common,
        ...secret('token'),
        context: z.string().min(1).optional(),
        baseURL: z.string().url().optional(),
        verbose: z.boolean().default(false),
      })
      .strict(),
    (_r, checks) => checks.once('token', true),
  );
