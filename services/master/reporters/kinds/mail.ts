// Mail, as Buildbot's MailNotifier sends it: one message per event that its generators report
// (by default a build's end, for the results its mode asks for), over SMTP to `relayhost`.
// - useTls: STARTTLS is required (the message is never sent in clear); useSmtps: TLS from the
//   first byte (port 465). Without either, STARTTLS is still used when the relay offers it.
//   The relay's certificate is checked (against smtpCaFile when given); Buildbot checks none.
// - smtpUser and smtpPassword: AUTH (PLAIN or LOGIN, as the relay offers).
// - recipients: with sendToInterestedUsers, the blamelist (change authors, the owner), each
//   name without `@` completed with `lookup`'s domain, kept when it is an address; then
//   extraRecipients, in Cc when there are interested users, else in To. No recipient: no mail.
// - body: the reports' bodies, plain or HTML as the formatter says; subject: the first one's;
//   patches attached with add_patch; extraHeaders (Interpolate templates over the build's
//   properties) added.
// A relay's 5xx answer (a refused login, a refused address) fails the job for good; anything
// else (no connection, a 4xx, a timeout) is retried.
import { readFileSync } from 'node:fs';
import { VALID_EMAIL } from '../../../core/config/master-config/reporters/mail.js';
import type { ReporterConfig } from '../../../core/config/master-config.js';
import { interpolate } from '../../builds/interpolate.js';
import { message } from '../formatters.js';
import { DeliveryError } from '../http-client.js';
import { loadNodemailer } from '../packages.js';
import type { Report, Sender } from '../report.js';
import type { ReporterKind } from './kind.js';

type MailConfig = Extract<ReporterConfig, { type: 'mail' }>;

/** Buildbot's findInterrestedUsersEmails: the blamelist's valid addresses. */
export function interestedAddresses(users: readonly string[], lookup: string | undefined): string[] {
  const out = new Set<string>();
  for (const u of users) {
    let r = lookup && !u.includes('@') ? `${u}@${lookup}` : u;
    // Git can make `'User' <user@example.com>@example.com`: the last `@...` goes.
    if ((r.match(/@/g) ?? []).length > 1) r = r.slice(0, r.lastIndexOf('@'));
    if (VALID_EMAIL.test(r)) out.add(r);
  }
  return [...out];
}

export function recipients(cfg: MailConfig, users: readonly string[]): { to: string[]; cc: string[] } {
  const interested = cfg.sendToInterestedUsers ? interestedAddresses(users, cfg.lookup) : [];
  const to = new Set(interested);
  const cc = new Set<string>();
  for (const r of cfg.extraRecipients) (cfg.sendToInterestedUsers && to.size ? cc : to).add(r);
  return { to: [...to].sort(), cc: [...cc].sort() };
}

function merged(reports: Report[]) {
  const first = reports[0]!;
  const body = reports.map((r) => (r.body === null || r.body === undefined ? '' : String(r.body))).join('');
  return {
    subject: reports.find((r) => r.subject)?.subject ?? '',
    type: first.type,
    // Buildbot ends every body with an empty line.
    body: body.endsWith('\n\n') ? body : `${body}\n\n`,
    users: [...new Set(reports.flatMap((r) => r.users))],
    builds: reports.flatMap((r) => r.builds),
    patches: reports.flatMap((r) => r.patches),
  };
}

function failure(err: unknown): DeliveryError {
  const e = err as Error & { responseCode?: number; code?: string };
  const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
  return new DeliveryError(`SMTP: ${e.message}`, !permanent);
}

function mailSender(cfg: MailConfig, smtpPassword: string | undefined): Sender {
  const transport = loadNodemailer().createTransport({
    host: cfg.relayhost,
    port: cfg.smtpPort,
    secure: cfg.useSmtps,
    requireTLS: cfg.useTls,
    ...(cfg.smtpUser && smtpPassword !== undefined
      ? { auth: { user: cfg.smtpUser, pass: smtpPassword } }
      : {}),
    ...(cfg.smtpCaFile ? { tls: { ca: readFileSync(cfg.smtpCaFile) } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(reports) {
      const m = merged(reports);
      const { to, cc } = recipients(cfg, m.users);
      if (to.length === 0 && cc.length === 0) return 0;
      const props = m.builds.length === 1 ? m.builds[0]!.properties : null;
      const headers = Object.fromEntries(
        Object.entries(cfg.extraHeaders).map(([k, v]) => [k, props ? interpolate(v, props) : v]),
      );
      try {
        await transport.sendMail({
          from: cfg.fromaddr,
          to,
          ...(cc.length ? { cc } : {}),
          subject: m.subject,
          ...(m.type === 'html' ? { html: m.body } : { text: m.body }),
          headers,
          attachments: m.patches.map((p, i) => ({ filename: `source patch ${i}`, content: p.body })),
        });
      } catch (err) {
        throw failure(err);
      }
      return 1;
    },
    close: () => transport.close(),
  };
}

export const mail: ReporterKind<MailConfig> = {
  // MailNotifier's: an HTML mail at a build's end, with its patches.
  defaultGenerators: [
    {
      type: 'build_status',
      mode: ['failing', 'passing', 'warnings'],
      report_new: false,
      message_formatter: message('html'),
      add_patch: true,
    },
  ],
  sender: (cfg, credential) => mailSender(cfg, credential(cfg, 'smtpPassword')),
};
