// The identifier the other files share: the name of a builder, worker, scheduler or step.
import { z } from 'zod';
import { URL_IDENTIFIER } from '../../identifiers.js';

// Builder, worker, scheduler and step names appear in URLs: URL identifiers.
export const identifier = z
  .string()
  .regex(
    URL_IDENTIFIER,
    'expected an identifier (letters, digits, "_", "-", "."; not starting with a digit or ".")',
  )
  .max(50, 'expected at most 50 characters');
