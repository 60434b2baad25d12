// A builder: its workers, properties, locks (locks.ts) and steps (steps.ts).
import { z } from 'zod';
import { identifier } from './identifiers.js';
import { lockAccess } from './locks.js';
import { step } from './steps.js';

export const builder = z
  .object({
    name: identifier,
    description: z.string().optional(),
    tags: z.array(z.string()).default([]),
    // The name of one of `projects` (Buildbot 4.3's BuilderConfig project).
    project: z.string().min(1).optional(),
    workers: z.array(identifier).min(1),
    // Buildbot's collapseRequests: of the builder's pending requests with compatible source
    // stamps (the same codebases, repositories, branches and projects, no patch, both with
    // changes or the same revision), the newest is built and the older end SKIPPED. Off unless
    // asked for, where Buildbot's default is on (docs/compatibility.md says why).
    collapse_requests: z.boolean().default(false),
    properties: z.record(z.unknown()).default({}),
    // Locks the whole build holds, taken before its first step (Buildbot's BuilderConfig locks).
    locks: z.array(lockAccess).default([]),
    steps: z.array(step).default([]),
  })
  .strict();
