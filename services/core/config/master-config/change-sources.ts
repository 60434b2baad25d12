// A change source: a repository a master polls for changes, one only owned and shown, or
// Buildbot's PBChangeSource, where `buildbot sendchange` delivers changes over PB.
import { z } from 'zod';
import { pollerCodebase } from './codebases.js';
import { listenPort } from './protocols.js';

// A change source runs on exactly one master. Without a type it is only owned and shown
// (changes then come through the change hooks); `git` polls a repository (Buildbot's GitPoller):
// `branches` (a list; `true`: every branch; default [main]) or `only_tags` (every tag, its
// changes on branch `refs/tags/NAME`, as Buildbot's), into a mirror kept in `workdir`
// (relative to MASTER_WORKDIR; default one of its own). Buildbot 3.7 refuses fetch_refspec.
const polled = z
  .object({
    name: z.string().min(1),
    type: z.literal('git').optional(),
    repourl: z.string().min(1).optional(),
    branches: z.union([z.literal(true), z.array(z.string().min(1)).min(1)]).optional(),
    only_tags: z.boolean().default(false),
    workdir: z.string().min(1).optional(),
    poll_interval: z.number().int().positive().default(600),
    project: z.string().default(''),
    category: z.string().optional(),
    // A change's codebase (text), or Buildbot 4.3's Codebase (master-config/codebases.ts).
    codebase: pollerCodebase,
  })
  .strict()
  .refine((c) => c.type === undefined || c.repourl !== undefined, {
    message: 'a git change source needs repourl',
    path: ['repourl'],
  })
  .refine((c) => !(c.only_tags && c.branches !== undefined), {
    message: 'give branches or only_tags, not both (Buildbot refuses both)',
    path: ['only_tags'],
  });

// Buildbot's PBChangeSource: `user`/`passwd` log in on the workers' PB port
// (`protocols.pb`; a `port` must be that one) on every master, and each change sent is added
// as a change. `prefix`: only files under it are kept, without it. Its name, unless given,
// is Buildbot's: PBChangeSource:PORT (PBChangeSource:PREFIX:PORT), PORT as configured here
// (`None` when not).
const pb = z
  .object({
    type: z.literal('pb'),
    name: z.string().min(1).optional(),
    user: z.string().min(1).default('change'),
    passwd: z.string().min(1).default('changepw'),
    port: listenPort.optional(),
    prefix: z.string().min(1).optional(),
  })
  .strict()
  .transform((c) => {
    const port = c.port === undefined ? 'None' : String(c.port.port);
    const name = c.name ?? (c.prefix ? `PBChangeSource:${c.prefix}:${port}` : `PBChangeSource:${port}`);
    return { ...c, name };
  });

export const changeSource = z.union([pb, polled]);
export type ChangeSourceConfig = z.infer<typeof changeSource>;
export type PbChangeSourceConfig = z.infer<typeof pb>;
export type PolledChangeSourceConfig = z.infer<typeof polled>;
