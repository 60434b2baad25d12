// The redactor's pure logic (services/master/builds/redact.ts): which texts a used secret is
// replaced in, in which encodings, line by line for a secret of several lines, word by word
// in labels, and overlapping secrets merged. The same secrets in real builds, on both
// workers: redaction.test.ts.
import { describe, expect, it } from 'vitest';
import { CoverMatcher } from '../../../services/master/builds/cover-matches.js';
import { Redactor } from '../../../services/master/builds/redact.js';

const PEM = [
  '-----BEGIN TEST KEY-----',
  'MIIBOgIBAAJBAKj34GkxFhD90vcN',
  'LYLInFEX6Ppy1tPf9Cnzj4p4WGeK',
  '-----END TEST KEY-----',
].join('\n');

const redactor = (secrets: Record<string, string>) => {
  const r = new Redactor();
  for (const [name, value] of Object.entries(secrets)) r.use(value, name);
  return r;
};

describe('a secret of one line', () => {
  const r = redactor({ token: 'hunter2-token' });

  it('is replaced wherever it occurs, and nothing else is', () => {
    expect(r.clean('token=hunter2-token and hunter2-tokenhunter2-token')).toBe(
      'token=<token> and <token><token>',
    );
    expect(r.clean('hunter2-toke hunter2')).toBe('hunter2-toke hunter2');
  });

  it('kept with its last newline (strip: false), it is still found in a line', () => {
    expect(redactor({ file: 'k3y-from-a-file\n' }).clean('key k3y-from-a-file')).toBe('key <file>');
  });

  it('a blank value is not recorded', () => {
    const b = redactor({ blank: ' \n' });
    expect(b.active).toBe(false);
    expect(b.clean(' \n')).toBe(' \n');
  });
});

describe("a secret holding ' and \\", () => {
  const value = `p'a\\ss`;
  const r = redactor({ quote: value });

  it.each([
    ['as it is', `echo ${value}`],
    ["buildbot-worker's argv, in double quotes (Python's repr of bytes)", ` argv: [b'echo', b"p'a\\\\ss"]`],
    ["buildbot-worker's argv, in single quotes", ` argv: [b'echo', b'x"p\\'a\\\\ss']`],
    ["buildbot-worker's echoed command (pipes.quote)", `echo 'p'"'"'a\\ss'`],
    ["the agent's argv", ` argv: ['echo', 'p\\'a\\\\ss']`],
    ['JSON', `{"v":"p'a\\\\ss"}`],
  ])('is replaced %s', (_, text) => {
    expect(r.clean(text)).toContain('<quote>');
    expect(r.clean(text)).not.toMatch(/ss/);
  });
});

describe('a secret holding non-ASCII and control characters', () => {
  it("is replaced in Python's repr of it as bytes and as a str", () => {
    const r = redactor({ u: 'pässwörd\ttab', c: 'x\u0001y-ctl' });
    expect(r.clean(String.raw` argv: [b'p\xc3\xa4ssw\xc3\xb6rd\ttab', b'x\x01y-ctl']`)).toBe(
      ` argv: [b'<u>', b'<c>']`,
    );
    expect(r.clean(String.raw`['pässwörd\ttab']`)).toBe(`['<u>']`);
    expect(r.clean(String.raw`{"u": "p\u00e4ssw\u00f6rd\ttab"}`)).toBe(`{"u": "<u>"}`);
  });
});

describe('a secret of several lines', () => {
  const r = redactor({ pem: PEM });

  it('is replaced whole, line by line, and in its escaped one-line forms', () => {
    expect(r.clean(`key: ${PEM}!`)).toBe('key: <pem>!');
    expect(PEM.split('\n').map((l) => r.clean(`  ${l}`))).toEqual(Array(4).fill('  <pem>'));
    expect(r.clean(` argv: [b'printf', b'${PEM.replace(/\n/g, '\\n')}']`)).toBe(
      ` argv: [b'printf', b'<pem>']`,
    );
    expect(r.clean(JSON.stringify({ k: PEM }))).toBe('{"k":"<pem>"}');
  });

  it('lines shorter than four characters are not looked for on their own', () => {
    const s = redactor({ short: 'abc\nlonger line' });
    expect(s.clean('abc')).toBe('abc');
    expect(s.clean('a longer line')).toBe('a <short>');
  });
});

describe('a secret of several words', () => {
  const r = redactor({ words: 'correct horse bat staple' });

  it('in labels, each word of four characters or more is replaced too; in logs, only the whole', () => {
    expect(r.cleanLabel("'echo correct ...'")).toBe("'echo <words> ...'");
    expect(r.cleanLabel('staple bat')).toBe('<words> bat');
    expect(r.clean('all correct')).toBe('all correct');
    expect(r.clean('echo correct horse bat staple')).toBe('echo <words>');
  });
});

describe('several secrets', () => {
  it('overlapping ones become one placeholder, and no part of either shows', () => {
    const r = redactor({ a: 'abcdef', b: 'defghi' });
    expect(r.clean('xabcdefghiy')).toBe('x<a>y');
    expect(r.clean('abcdef defghi')).toBe('<a> <b>');
  });

  it('one inside another is covered by the longer one', () => {
    const r = redactor({ inner: 'cret', outer: 'secret-value' });
    expect(r.clean('a secret-value, a cret')).toBe('a <outer>, a <inner>');
  });
});

describe('where a line too long to keep may be cut', () => {
  const r = redactor({ token: 'hunter2-token', pem: PEM });

  it('before a secret the text ends inside of, or that crosses the end', () => {
    expect(r.safeCut('output: hunter2-to')).toBe('output: '.length);
    // Whole at the end, it may still be the head of a longer form: cut before it too.
    expect(r.safeCut('output: hunter2-token')).toBe('output: '.length);
    expect(r.safeCut('hunter2-token, done')).toBe('hunter2-token, done'.length);
    expect(r.safeCut("argv: [b'-----BEGIN TEST KEY-----\\nMIIBOg")).toBe("argv: [b'".length);
    expect(r.safeCut('nothing secret here')).toBe('nothing secret here'.length);
    expect(new Redactor().safeCut('hunter2-to')).toBe(10);
  });
});

describe('the matcher', () => {
  it('finds the parts many needles cover, a match reaching back over earlier ones merging them', () => {
    const m = new CoverMatcher(['bc', 'd', 'abcde']);
    expect(m.scan('xabcdex').parts).toEqual([{ start: 1, end: 6, needle: 2 }]);
    expect(m.scan('bcd').parts).toEqual([
      { start: 0, end: 2, needle: 0 },
      { start: 2, end: 3, needle: 1 },
    ]);
    expect(m.scan('é d').parts).toEqual([{ start: 2, end: 3, needle: 1 }]);
    expect(m.scan('xxabc').open).toBe(3);
  });

  it('a text that nearly matches a long needle everywhere is covered only where it matches', () => {
    const needle = `${'a'.repeat(2000)}b`;
    const m = new CoverMatcher([needle]);
    const text = `${'a'.repeat(100_000)}b`;
    expect(m.scan(text).parts).toEqual([{ start: 100_000 - 2000, end: 100_001, needle: 0 }]);
  });
});
