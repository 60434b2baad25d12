// CORS as Buildbot does it: allowed origins default to the origin of the public URL (glob
// patterns allowed); a request from any other origin is refused with 400 "invalid origin".
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badOrigin, badPreflight } from '../errors/catalogue.js';
import { sendError } from '../errors/reply.js';

export interface CorsPolicy {
  origins: RegExp[];
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .toLowerCase()
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

export function corsPolicy(publicUrl: string, allowed?: readonly string[]): CorsPolicy {
  const self = new URL(publicUrl).origin;
  return { origins: (allowed?.length ? allowed : [self]).map(globToRegExp) };
}

/** Whether a browser page of this origin may call us (REST, JSON-RPC, and the events). */
export function originAllowed(policy: CorsPolicy, origin: string): boolean {
  const o = origin.toLowerCase();
  return policy.origins.some((r) => r.test(o));
}

/** False when the request was refused (the reply is sent). */
export function checkCors(policy: CorsPolicy, req: FastifyRequest, reply: FastifyReply): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  const o = origin.toLowerCase();
  if (!originAllowed(policy, o)) {
    sendError(req, reply, badOrigin());
    return false;
  }
  if (req.method === 'OPTIONS') {
    const m = req.headers['access-control-request-method'];
    if (m !== 'GET' && m !== 'POST' && m !== 'HEAD') {
      sendError(req, reply, badPreflight());
      return false;
    }
  }
  reply
    .header('access-control-allow-origin', o)
    .header('access-control-allow-headers', 'Content-Type')
    .header('access-control-max-age', '3600');
  return true;
}
