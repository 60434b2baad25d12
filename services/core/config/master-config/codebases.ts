// A codebase (Buildbot 4.3's c['codebases'], util.Codebase): a name, unique within its
// project, the name of one of `projects`, and a slug for URLs (the name when not given).
// A master records each at start (core/data/codebases.ts). A git change source given one
// (`codebase: {name, project}`, GitPoller(codebase=util.Codebase(...))) records its new
// commits and branch heads in it.
import { z } from 'zod';
import { identifier } from './identifiers.js';

export const codebase = z
  .object({
    name: z.string().min(1).max(70),
    project: z.string().min(1).max(70),
    slug: identifier.optional(),
  })
  .strict();
export type CodebaseConfig = z.infer<typeof codebase>;

// What a git change source names: Buildbot 4.3's util.Codebase object (name and project; its
// slug is the configured codebase's, or the name), or, as before 4.3, the text put in each
// change's `codebase` field (Flotilla's own key: Buildbot sets that with codebaseGenerator).
export const pollerCodebase = z.union([z.string(), codebase.omit({ slug: true })]).default('');
