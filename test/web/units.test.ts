// Pure logic of the web UI and of what the API tells it: ANSI colours, the log's pages and
// live lines, and which buttons the authz rules may allow (mayEver).
import { describe, expect, it } from 'vitest';
import { type AuthzPolicy, mayEver } from '../../services/core/auth/authz.js';
import { parseAnsi } from '../../services/web/src/ansi.js';
import { LogModel, PAGE, splitLines } from '../../services/web/src/log-model.js';

describe('parseAnsi', () => {
  it('leaves plain text alone', () => {
    expect(parseAnsi('hello')).toEqual([{ text: 'hello', cls: '' }]);
  });

  it('turns SGR codes into classes and colours, and drops other escapes', () => {
    const segs = parseAnsi(
      '\x1b[1;31mred bold\x1b[0m plain \x1b[38;5;196mx\x1b[38;2;1;2;3my\x1b[2K\x1b[42mz',
    );
    expect(segs).toEqual([
      { text: 'red bold', cls: 'af1 a-bold' },
      { text: ' plain ', cls: '' },
      { text: 'x', cls: '', color: 'rgb(255,0,0)' },
      { text: 'y', cls: '', color: 'rgb(1,2,3)' },
      { text: 'z', cls: 'ab2', color: 'rgb(1,2,3)' },
    ]);
  });

  it('keeps bright colours apart from the normal ones', () => {
    expect(parseAnsi('\x1b[92mok')).toEqual([{ text: 'ok', cls: 'af10' }]);
  });
});

describe('splitLines', () => {
  it('reads a logchunk content as lines', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b']);
  });
});

describe('LogModel', () => {
  const noFetch = () => {
    throw new Error('no read expected');
  };

  it('appends live lines that continue a page, and grows its count', () => {
    const m = new LogModel(1, 0);
    const real = globalThis.fetch;
    globalThis.fetch = noFetch as unknown as typeof fetch;
    try {
      m.append({ logid: 1, firstline: 0, content: 'oa\nob\n' });
      m.append({ logid: 1, firstline: 2, content: 'oc\n' });
      expect(m.numLines).toBe(3);
      expect([m.line(0), m.line(1), m.line(2)]).toEqual(['oa', 'ob', 'oc']);
    } finally {
      globalThis.fetch = real;
    }
  });

  it('leaves a gap to be read, never fills it with later lines', async () => {
    const m = new LogModel(1, 0);
    const asked: string[] = [];
    const real = globalThis.fetch;
    globalThis.fetch = (async (url: string) => {
      asked.push(url);
      return new Response(JSON.stringify({ logchunks: [{ firstline: 0, content: 'o1\no2\no3\no4\n' }] }));
    }) as unknown as typeof fetch;
    try {
      m.append({ logid: 1, firstline: 0, content: 'o1\n' });
      m.append({ logid: 1, firstline: 3, content: 'o4\n' });
      expect(m.line(3)).toBeNull();
      expect(m.numLines).toBe(4);
      const changed = new Promise<void>((resolve) => {
        m.onChange = resolve;
      });
      m.want(0, 4);
      await changed;
      expect(asked).toEqual([`api/v2/logs/1/contents?offset=0&limit=${PAGE}`]);
      expect([0, 1, 2, 3].map((i) => m.line(i))).toEqual(['o1', 'o2', 'o3', 'o4']);
    } finally {
      globalThis.fetch = real;
    }
  });
});

describe('mayEver', () => {
  const policy = (rules: AuthzPolicy['rules']): AuthzPolicy => ({
    rules,
    roleMatchers: [
      { role: 'admins', groups: ['admin'] },
      { role: 'owner', owner: true },
    ],
  });
  const admin = { username: 'a', groups: ['admin'] };
  const dev = { username: 'd', groups: [] };
  const anonymous = { anonymous: true };
  const stopRule = (rule: { match: string; builders?: string[] }) =>
    rule.match === 'any-control'
      ? 'certain'
      : rule.match === 'stop'
        ? rule.builders
          ? 'some'
          : 'certain'
        : null;

  it('allows everything without rules', () => {
    expect(mayEver(policy([]), anonymous, stopRule)).toBe(true);
  });

  it('refuses only what a default-deny rule refuses for every target', () => {
    const p = policy([{ match: 'stop', roles: ['admins'], default_deny: true }]);
    expect(mayEver(p, admin, stopRule)).toBe(true);
    expect(mayEver(p, dev, stopRule)).toBe(false);
    expect(mayEver(p, anonymous, stopRule)).toBe(false);
  });

  it('counts a rule limited to some builders as a maybe', () => {
    const p = policy([
      { match: 'stop', builders: ['a*'], roles: ['admins'], default_deny: true },
      { match: 'any-control', roles: ['nobody'], default_deny: true },
    ]);
    expect(mayEver(p, admin, stopRule)).toBe(true);
    expect(mayEver(p, dev, stopRule)).toBe(false);
  });

  it('lets owners of a build hope, but not anonymous users', () => {
    const p = policy([{ match: 'stop', roles: ['owner'], default_deny: true }]);
    expect(mayEver(p, dev, stopRule)).toBe(true);
    expect(mayEver(p, anonymous, stopRule)).toBe(false);
  });
});
