// A worker: its name, where its password is, how many builds it runs at once.
import { z } from 'zod';
import { identifier } from './identifiers.js';

export const worker = z
  .object({
    name: identifier,
    // Exactly one of these says where the password is; a literal only for local examples.
    password: z.string().min(1).optional(),
    password_env: z.string().min(1).optional(),
    password_file: z.string().min(1).optional(),
    max_builds: z.number().int().positive().default(1),
    properties: z.record(z.unknown()).default({}),
  })
  .strict()
  .refine((s) => [s.password, s.password_env, s.password_file].filter((v) => v !== undefined).length === 1, {
    message: 'expected exactly one of password, password_env, password_file',
  });
