// A JSON POST of each report to a URL, as Buildbot's HttpStatusPush sends it: the body is the
// first report's body as JSON (by default the build's data, at its start and its end), with
// the configured headers and, with `auth`, HTTP Basic credentials.
// Ours beyond Buildbot: with `hmac_secret`, X-Flotilla-Signature-256 carries
// `sha256=<hex HMAC-SHA256 of the body bytes>`, the scheme GitHub's webhooks use, so the
// receiver can check that the report came from this Flotilla and was not altered.
import { createHmac } from 'node:crypto';
import type { ReporterConfig } from '../../../core/config/master-config.js';
import { request } from '../http-client.js';
import type { Sender } from '../report.js';
import type { ReporterKind } from './kind.js';

export const SIGNATURE_HEADER = 'X-Flotilla-Signature-256';

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

type HttpConfig = Extract<ReporterConfig, { type: 'http' }>;

function httpSender(cfg: HttpConfig, secrets: { password?: string; hmacSecret?: string }): Sender {
  const base: Record<string, string> = {
    'User-Agent': 'Flotilla',
    ...cfg.headers,
    'Content-Type': 'application/json',
  };
  if (cfg.auth && secrets.password !== undefined)
    base.Authorization = `Basic ${Buffer.from(`${cfg.auth.user}:${secrets.password}`).toString('base64')}`;
  return {
    async send(reports) {
      const body = JSON.stringify(reports[0]!.body ?? null);
      const headers = secrets.hmacSecret
        ? { ...base, [SIGNATURE_HEADER]: signature(secrets.hmacSecret, body) }
        : base;
      await request('POST', cfg.serverUrl, headers, body);
      return 1;
    },
  };
}

export const http: ReporterKind<HttpConfig> = {
  // HttpStatusPush's: the build's data at its end, and when it is new.
  defaultGenerators: [
    {
      type: 'build_status',
      mode: ['failing', 'passing', 'warnings'],
      report_new: true,
      message_formatter: { type: 'json' },
      add_patch: false,
    },
  ],
  sender(cfg, credential) {
    const password = cfg.auth ? credential(cfg.auth, 'password') : undefined;
    const hmacSecret = credential(cfg, 'hmac_secret');
    return httpSender(cfg, {
      ...(password !== undefined ? { password } : {}),
      ...(hmacSecret ? { hmacSecret } : {}),
    });
  },
};
