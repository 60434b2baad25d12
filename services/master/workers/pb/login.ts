// The server side of Twisted cred's PB login, as a Buildbot 3.7 master offers it to its
// workers (twisted/spread/pb.py: _PortalRoot, _PortalWrapper, _PortalAuthChallenger, respond;
// buildbot/worker/protocols/manager/pb.py for the refusal). The worker calls `login(username)`
// on the broker's `root`, gets `(challenge, challenger)`, and calls
// `challenger.respond(md5(md5(password) + challenge), mind)`; the answer is its perspective, and
// `mind` is the worker's own object that the master then calls (`print`, `getWorkerInfo`, ...).
// A wrong password and an unknown name get the same answer, a CopyableFailure of
// `twisted.cred.error.UnauthorizedLogin` with an empty message (test/fixtures/pb/
// login-wrong-password.json), so a caller cannot tell names from passwords; the master logs it.
// The challenge is 16 random bytes, as Twisted's (an md5 digest of random letters), here from
// the system's CSPRNG; the response is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LocalObject, RemoteReference } from './broker.js';
import { type JellyValue, RemoteFailure, Tuple } from './jelly.js';

/** Twisted's answer to a refused login; a client takes it for a wrong name or password and retries. */
export const UNAUTHORIZED = new RemoteFailure('twisted.cred.error.UnauthorizedLogin', '', [
  'twisted.cred.error.UnauthorizedLogin',
  'twisted.cred.error.LoginFailed',
  'twisted.cred.error.Unauthorized',
  'builtins.Exception',
  'builtins.BaseException',
  'builtins.object',
]);

export interface PbPortal {
  /** The worker's password, or undefined for a name the master does not know. */
  password(name: string): string | undefined | Promise<string | undefined>;
  /** After a good response: the perspective the worker gets, given its mind. */
  loggedIn(name: string, mind: RemoteReference | null): LocalObject | Promise<LocalObject>;
  /** A refused login, for the master's log line. */
  refused(name: string, why: 'unknown name' | 'wrong password'): void;
}

const md5 = (...parts: Buffer[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** What a PB client sends for `password` and `challenge` (pb.py, respond). */
export function pbResponse(password: string, challenge: Buffer): Buffer {
  return md5(md5(Buffer.from(password, 'utf8')), challenge);
}

function name(v: JellyValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  throw UNAUTHORIZED;
}

/** The broker's `root` object for a portal. */
export function pbLoginRoot(portal: PbPortal): LocalObject {
  return new LocalObject('_PortalWrapper', {
    login: ([username]) => {
      const user = name(username);
      const challenge = randomBytes(16);
      const challenger = new LocalObject('_PortalAuthChallenger', {
        respond: async ([response, mind]) => {
          const password = await portal.password(user);
          if (password === undefined) {
            portal.refused(user, 'unknown name');
            throw UNAUTHORIZED;
          }
          const expected = pbResponse(password, challenge);
          const given = response instanceof Uint8Array ? Buffer.from(response) : Buffer.alloc(0);
          if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
            portal.refused(user, 'wrong password');
            throw UNAUTHORIZED;
          }
          // A client may give no mind (None): `buildbot sendchange` and `buildbot try` do.
          if (mind !== null && !(mind instanceof RemoteReference)) throw UNAUTHORIZED;
          return portal.loggedIn(user, mind);
        },
      });
      return new Tuple(challenge, challenger);
    },
  });
}
