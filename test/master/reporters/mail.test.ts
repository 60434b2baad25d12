// The mail reporter end to end (Buildbot's MailNotifier): a real SMTP server on 127.0.0.1
// (the smtp-server package) that offers STARTTLS with a certificate the test makes, and
// takes a login only once TLS is up; the reporter must upgrade, check that certificate
// against the configured authority, log in, and send one message per reported build, to
// the build's interested users (its owner here) with extraRecipients in Cc. A mode chooses
// which results are mailed. A build's properties that carry a header of their own (issue
// 28's review: it held) add none: not through the owner, the subject, nor extraHeaders.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { BUILDERS, requestBuild } from './builds.js';

interface Delivered {
  mail: ParsedMail;
  secure: boolean;
  user: unknown;
  from: string;
  to: string[];
}

let stage: Stage;
let smtp: SMTPServer;
let port: number;
let dir: string;
const received: Delivered[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-smtp-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  smtp = new SMTPServer({
    secure: false,
    key: readFileSync(join(dir, 'key.pem')),
    cert: readFileSync(join(dir, 'cert.pem')),
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, cb) {
      // smtp-server refuses AUTH before STARTTLS itself (allowInsecureAuth is off).
      if (auth.username === 'ci' && auth.password === 'mail-pw') cb(null, { user: auth.username });
      else cb(new Error('bad credentials'));
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            mail,
            secure: session.secure,
            user: session.user,
            from: (session.envelope.mailFrom as { address: string }).address,
            to: session.envelope.rcptTo.map((r) => r.address).sort(),
          });
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.server.address() as { port: number }).port;
  stage = await Stage.open();
}, 60_000);
afterAll(async () => {
  await stage?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const PROPERTIES = { owner: ['alice', 'Force'] } as const;

const config = (extra = '') => `${BUILDERS}
reporters:
  - type: mail
    fromaddr: "Flotilla <ci@example.com>"
    relayhost: 127.0.0.1
    smtpPort: ${port}
    useTls: true
    smtpUser: ci
    smtpPassword: mail-pw
    smtpCaFile: ${join(dir, 'cert.pem')}
    lookup: example.com
    extraRecipients: [releases@example.com]
    generators:
      - type: build_status
        mode: failing
${extra}`;

const request = async (builder: 'app' | 'broken') => {
  await requestBuild(stage, builder, {}, PROPERTIES);
};

describe('mail', () => {
  it('mails a failing build over STARTTLS with a login, to its owner, and not a passing one', async () => {
    const m = await stage.master('mail-a', config(), { timing: { reportBackoffMs: 50 } });
    m.workers.connect(new ScriptedWorker('w1'));
    await request('app');
    await request('broken');
    await waitFor("the failing build's mail at the SMTP server", () => received.length >= 1);
    // The passing build was heard and had nothing to say.
    await waitFor('the passing build judged', async () =>
      /flotilla_reports_total\{reporter="mail",outcome="nothing"\} 1/.test((await m.master.metrics()).body),
    );
    expect(received).toHaveLength(1);
    const [d] = received;
    expect(d!.secure).toBe(true);
    expect(d!.user).toBe('ci');
    expect(d!.from).toBe('ci@example.com');
    expect(d!.to).toEqual(['alice@example.com', 'releases@example.com']);
    expect(d!.mail.subject).toContain('failure');
    expect(d!.mail.subject).toContain('broken');
    expect(d!.mail.text).toContain('failed build on builder broken');
    expect(d!.mail.text).toMatch(/compile: failure/);
    await m.stop();
  });
});

describe('a build whose properties carry mail headers', () => {
  it('adds no header and no recipient', async () => {
    const m = await stage.master(
      'mail-b',
      config(`        message_formatter:
          type: message
          template_type: plain
          subject: "build of {{ build.properties.note[0] }}"
    extraHeaders:
      X-Note: "%(prop:note)s"
`),
      { timing: { reportBackoffMs: 50 } },
    );
    m.workers.connect(new ScriptedWorker('w1'));
    const injected = 'Bcc: evil@example.com\r\nX-Injected: yes';
    const before = received.length;
    await requestBuild(
      stage,
      'broken',
      {},
      {
        owner: [`alice@example.com\r\n${injected}`, 'Force'],
        note: [`main\r\n${injected}\r\n\r\nforged body`, 'Force'],
      },
    );
    await waitFor('the mail at the SMTP server', () => received.length > before);
    const d = received.at(-1)!;
    // The owner's address is not an address: only extraRecipients receive the mail.
    expect(d.to).toEqual(['releases@example.com']);
    expect(d.mail.headers.has('bcc')).toBe(false);
    expect(d.mail.headers.has('x-injected')).toBe(false);
    expect(d.mail.subject).toBe(`build of main ${injected.replace('\r\n', ' ')} forged body`);
    // extraHeaders' value: the property, on its one line.
    expect(String(d.mail.headers.get('x-note'))).toMatch(/^main Bcc: evil@example\.com X-Injected: yes/);
    expect(String(d.mail.headers.get('x-note'))).not.toMatch(/[\r\n]/);
    expect(d.mail.text).not.toContain('forged body');
    await m.stop();
  });
});
