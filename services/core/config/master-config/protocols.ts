// Which worker protocols a master listens on, and where: Buildbot's `c['protocols']` in the
// same shape, so that a master.cfg's `{'pb': {'port': 9989}}` reads as
// `protocols: { pb: { port: 9989 } }` (Buildbot's PB, what `buildbot-worker create-worker`
// speaks by default; msgpack_experimental_v7 likewise). `flotilla` is our own protocol
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
    pb: listener.optional(),
  })
  .strict()
  .transform(({ flotilla, msgpack_experimental_v7, pb }) => ({
    ...(flotilla ? { flotilla: flotilla.port } : {}),
    ...(msgpack_experimental_v7 ? { msgpack_experimental_v7: msgpack_experimental_v7.port } : {}),
    ...(pb ? { pb: pb.port } : {}),
  }));

export type ProtocolsConfig = z.output<typeof protocols>;
