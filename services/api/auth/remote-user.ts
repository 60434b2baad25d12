// auth.remote_user (Buildbot's RemoteUserAuth): who a request's user is, from the header an
// authenticating reverse proxy sets. Buildbot facts (buildbot/www/auth.py RemoteUserAuth,
// 3.7): the header (default REMOTE_USER) missing is a 403 "missing http header REMOTE_USER.
// Check your reverse proxy config!"; a value the regex does not match (re.match: from its
// start) is a 403 naming both (here the regex only: the value is not echoed); the regex's named groups are the user info, with `email` the
// user name (UserInfoProviderBase). Where we differ: the header counts only when the TCP peer
// is one of `trusted_proxies` (never X-Forwarded-For, which the client writes); from anyone
// else it is ignored, as if absent, so a client that goes around the proxy is nobody. The info
// also has `groups: []`, as every login's has here.
import type { BlockList } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { headerPattern, proxyList } from '../../core/config/master-config/remote-user.js';
import type { AuthConfig } from '../../core/config/master-config.js';
import { remoteUserRefused } from '../errors/catalogue.js';
import type { UserInfo } from './session.js';

type RemoteUserConfig = NonNullable<AuthConfig['remote_user']>;

const MAX_VALUE = 1024;

export class RemoteUserLogin {
  private constructor(
    private readonly header: string,
    private readonly displayName: string,
    private readonly pattern: RegExp,
    private readonly source: string,
    private readonly proxies: BlockList,
  ) {}

  static fromConfig(cfg: RemoteUserConfig): RemoteUserLogin {
    return new RemoteUserLogin(
      cfg.header.toLowerCase(),
      cfg.header,
      headerPattern(cfg.headerRegex),
      cfg.headerRegex,
      proxyList(cfg.trusted_proxies),
    );
  }

  /** Whether the request came straight from a trusted proxy (its TCP peer, not a header). */
  fromProxy(req: FastifyRequest): boolean {
    const peer = req.raw.socket?.remoteAddress ?? '';
    const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer)?.[1];
    if (v4) return this.proxies.check(v4, 'ipv4');
    return this.proxies.check(peer, peer.includes(':') ? 'ipv6' : 'ipv4');
  }

  /**
   * The user the proxy names; null when the request did not come from a trusted proxy (the
   * header is not believed). Throws 403 when a trusted proxy names nobody the regex accepts.
   */
  userOf(req: FastifyRequest): UserInfo | null {
    if (!this.fromProxy(req)) return null;
    const raw = req.headers[this.header];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined)
      throw remoteUserRefused(`missing http header ${this.displayName}. Check your reverse proxy config!`);
    const m = value.length <= MAX_VALUE ? this.pattern.exec(value) : null;
    if (!m?.groups?.username)
      throw remoteUserRefused(
        `http header ${this.displayName} does not match regex! not matching ${this.source}`,
      );
    const info: UserInfo = {};
    for (const [k, v] of Object.entries(m.groups)) if (v !== undefined) info[k] = v;
    return { ...info, email: m.groups.username, groups: [] };
  }
}
