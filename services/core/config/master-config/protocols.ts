// Which worker protocols a master listens on, and where: Buildbot's `c['protocols']` in the
// same shape, so that a master.cfg's `{'msgpack_experimental_v7': {'port': 9989}}` reads as
// `protocols: { msgpack_experimental_v7: { port: 9989 } }`. `flotilla` is our own protocol
// (Flotilla's agent); without a port here it listens on WORKER_PORT, as before this section
// existed. A port is a number, or Buildbot's endpoint string `tcp:9989` or
// `tcp:9989:interface=127.0.0.1`.
import { z } from 'zod';

const ENDPOINT = /^tcp:(\d{1,5})(?::interface=([^:]+))?$/;

/** A listening port as Buildbot writes it, and the interface it names (if any). */
export const listenPort = z.union([z.number().int(), z.string()]).transform((v, ctx) => {
  const m = typeof v === 'string' ? ENDPOINT.exec(v) : null;
  const port = typeof v === 'number' ? v : m ? Number(m[1]) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'expected a port (0-65535) or "tcp:PORT[:interface=ADDRESS]"',
    });
    return z.NEVER;
  }
  return m?.[2] ? { port, host: m[2] } : { port };
});

const listener = z.object({ port: listenPort }).strict();

export const protocols = z
  .object({
    flotilla: listener.optional(),
    msgpack_experimental_v7: listener.optional(),
    pb: z.unknown().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.pb !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['pb'],
        message:
          "Buildbot's PB protocol is not supported: create the workers with --protocol=msgpack_experimental_v7 (docs/migrating-from-buildbot.md)",
      });
  })
  .transform(({ flotilla, msgpack_experimental_v7 }) => ({
    ...(flotilla ? { flotilla: flotilla.port } : {}),
    ...(msgpack_experimental_v7 ? { msgpack_experimental_v7: msgpack_experimental_v7.port } : {}),
  }));

export type ProtocolsConfig = z.output<typeof protocols>;
