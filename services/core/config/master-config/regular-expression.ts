// A configuration value that must compile as a JavaScript regular expression (a scheduler's
// file_pattern, the github hook's skips), refused at load otherwise.
import { z } from 'zod';

export const regularExpression = z.string().refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a regular expression' },
);
