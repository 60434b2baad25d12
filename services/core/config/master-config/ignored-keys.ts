// Buildbot keys that mean nothing to Flotilla. A master.cfg moved over (by hand or by the importer)
// often still carries them; refusing them would make a team delete lines for no gain, so they are
// accepted, and each one present is named with the reason at start (a structured warning).
import { z } from 'zod';

const why = {
  buildbotNetUsageData: 'Flotilla sends no usage data anywhere',
  titleURL: 'the web UI links its title to its own home page',
  'www.port': "the API pods listen where their environment says (PORT), not where the master's file says",
  'www.plugins': "the web UI is Flotilla's own; Buildbot's UI plugins do not load in it",
} as const;

export type IgnoredKey = keyof typeof why;

/** Top-level keys accepted and ignored. */
export const ignoredTopLevel = {
  buildbotNetUsageData: z.unknown().optional(),
  titleURL: z.unknown().optional(),
};

/** `www` keys accepted and ignored. */
export const ignoredWww = {
  port: z.unknown().optional(),
  plugins: z.unknown().optional(),
};

/** The ignored keys a configuration has, each with why it is ignored, for a warning at start. */
export function ignoredKeys(cfg: {
  buildbotNetUsageData?: unknown;
  titleURL?: unknown;
  www: { port?: unknown; plugins?: unknown };
}): { key: IgnoredKey; reason: string }[] {
  const present: Record<IgnoredKey, boolean> = {
    buildbotNetUsageData: cfg.buildbotNetUsageData !== undefined,
    titleURL: cfg.titleURL !== undefined,
    'www.port': cfg.www.port !== undefined,
    'www.plugins': cfg.www.plugins !== undefined,
  };
  return (Object.keys(why) as IgnoredKey[])
    .filter((k) => present[k])
    .map((key) => ({ key, reason: why[key] }));
}
