// A provider that cannot be asked while a template renders (rendering is synchronous, and pass
// runs a process, Vault answers over HTTP): the values of the names a build will need are read
// as the build starts (`load`), and `get` answers from what was read. Each load reads every
// name again, so a rotated secret is used by the next build, as the directory provider's is.
// A name that could not be read (the provider failed, not "no such secret") is logged and
// answers undefined: the template that needs it fails as a missing secret does.
import type { Logger } from '../../core/telemetry/logger.js';

export interface PrefetchedProvider {
  get(name: string): string | undefined;
  load(names: readonly string[]): Promise<void>;
}

/** `read` gives a name's value, undefined when the provider has no such secret, or throws. */
export function prefetched(
  what: string,
  read: (name: string) => Promise<string | undefined>,
  log: Logger | undefined,
): PrefetchedProvider {
  const values = new Map<string, string>();
  return {
    get: (name) => values.get(name),
    async load(names) {
      await Promise.all(
        names.map(async (name) => {
          try {
            const v = await read(name);
            if (v === undefined) values.delete(name);
            else values.set(name, v);
          } catch (err) {
            values.delete(name);
            log?.warn(
              { provider: what, secret: name, err: (err as Error).message },
              'a secret could not be read',
            );
          }
        }),
      );
    },
  };
}
