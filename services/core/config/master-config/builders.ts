// A builder: its workers, properties, locks (locks.ts) and steps (steps.ts).
import { z } from 'zod';
import { identifier } from './identifiers.js';
import { lockAccess } from './locks.js';
import { renderable } from './step-common.js';
import { step } from './steps.js';

// A directory under the worker's base directory: relative, without `..`.
const underBase = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), {
    message: "expected a relative path without '..'",
  });

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
    // Buildbot's defaultProperties: set only where nothing before the builder (the global
    // properties, the build set's) set them.
    defaultProperties: z.record(z.unknown()).default({}),
    // Buildbot's env: the environment of every command of the builder's shell steps, under
    // each step's own env, its templates rendered per build.
    env: z.record(renderable).default({}),
    // Buildbot's workerbuilddir: the builder's directory on the worker (default its name).
    workerbuilddir: underBase.optional(),
    // Locks the whole build holds, taken before its first step (Buildbot's BuilderConfig locks).
    locks: z.array(lockAccess).default([]),
    steps: z.array(step).default([]),
  })
  .strict();

/** The builder's directory on the worker, relative to the worker's base directory. */
export const builderDir = (b: { name: string; workerbuilddir?: string | undefined }): string =>
  b.workerbuilddir ?? b.name;
