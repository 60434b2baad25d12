// The identifier the other files share: the name of a builder, worker, scheduler or step.
import { z } from 'zod';

// Buildbot identifiers: builder, worker, scheduler and step names appear in URLs.
export const identifier = z
  .string()
  .regex(
    /^[a-zA-Z_-][.a-zA-Z0-9_-]*$/,
    'expected an identifier (letters, digits, "_", "-", "."; not starting with a digit or ".")',
  )
  .max(50, 'expected at most 50 characters');
