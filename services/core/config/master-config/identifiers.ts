// The identifiers the other files share: the name of a builder, worker, scheduler or lock; a step's name.
import { z } from 'zod';
import { codePoints, URL_IDENTIFIER } from '../../identifiers.js';

// Builder, worker, scheduler and step names appear in URLs: URL identifiers.
export const identifier = z
  .string()
  .regex(
    URL_IDENTIFIER,
    'expected an identifier (letters, digits, "_", "-", "."; not starting with a digit or ".")',
  )
  .max(50, 'expected at most 50 characters');

// A step's name is not a URL identifier in Buildbot: any string of at most 50 characters
// (buildbot/process/buildstep.py checks it against the steps table's name column, String(50)),
// so `unit tests` and `set stage` are names. Buildbot's REST paths by step name
// (`steps/i:step_name`) only match identifiers; a name with a space is reached by number.
export const stepName = z
  .string()
  .min(1, 'expected a step name (1 to 50 characters)')
  .refine((s) => codePoints(s) <= 50, 'expected at most 50 characters');
