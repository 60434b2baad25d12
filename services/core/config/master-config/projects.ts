// A project (Buildbot 4.3's c['projects'], util.Project): a name, a slug for URLs (the name
// when not given), and a description in plain text or markdown. Builders name theirs with
// `project:` (BuilderConfig(project=...)).
import { z } from 'zod';
import { identifier } from './identifiers.js';

export const project = z
  .object({
    name: z.string().min(1).max(70),
    slug: identifier.optional(),
    description: z.string().optional(),
    // Buildbot renders markdown to description_html; Flotilla keeps the text and its format
    // (docs/compatibility.md).
    description_format: z.enum(['markdown']).optional(),
  })
  .strict();
