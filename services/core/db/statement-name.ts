// The name a statement text is prepared under on a connection: derived from the text alone, so
// that every process, pool and connection gives one text the same name and node-postgres'
// per-connection record of what it parsed (a name to its text) never meets two texts under one
// name. 20 base64url characters of SHA-1 (120 bits) make a collision between a process's few
// hundred texts out of reach; PostgreSQL allows 63 bytes a name.
import { createHash } from 'node:crypto';

export function statementName(text: string): string {
  return `f${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
}
