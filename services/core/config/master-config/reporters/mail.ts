// `type: mail`: Buildbot's MailNotifier (services/master/reporters/kinds/mail.ts).
import { z } from 'zod';
import { common, given, reporterSchema, secret } from './kind.js';

// Buildbot's VALID_EMAIL: `addr@domain.tld` or `Name <addr@domain.tld>`; the local part is
// anything but whitespace, the domain needs a dot.
const ADDRESS = String.raw`\S+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+\.?`;
export const VALID_EMAIL = new RegExp(String.raw`^(?:${ADDRESS}|(?:.+\s+)?<${ADDRESS}>\s*)$`);

const email = z.string().regex(VALID_EMAIL, { message: 'expected an email address' });

export const mail = reporterSchema(
  z
    .object({
      type: z.literal('mail'),
      ...common,
      fromaddr: email,
      relayhost: z.string().min(1).default('localhost'),
      smtpPort: z.number().int().min(1).max(65535).default(25),
      useTls: z.boolean().default(false),
      useSmtps: z.boolean().default(false),
      smtpUser: z.string().min(1).optional(),
      ...secret('smtpPassword'),
      // Ours: a PEM authority the relay's certificate is checked against (else the system's).
      smtpCaFile: z.string().min(1).optional(),
      lookup: z
        .string()
        .regex(/^[^@\s]+$/, 'expected a domain')
        .optional(),
      extraRecipients: z.array(email).default([]),
      sendToInterestedUsers: z.boolean().default(true),
      extraHeaders: z.record(z.string()).default({}),
    })
    .strict(),
  (r, checks) => {
    checks.once('smtpPassword', false);
    if ((r.smtpUser === undefined) !== (given(r, 'smtpPassword') === 0))
      checks.problem(['smtpUser'], 'expected smtpUser and smtpPassword together');
  },
);
