// Pure logic of the web UI and of what the API tells it: ANSI colours, the log's pages and
// live lines, which buttons the authz rules may allow (mayEver), and which of a build's
// links it follows (issue 28's review: HTML, `javascript:` and `data:` links showed as text).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { type AuthzPolicy, mayEver } from '../../services/core/auth/authz.js';
import { ansiEnd, PLAIN, parseAnsi } from '../../services/web/src/ansi.js';
import { onTick } from '../../services/web/src/clock.js';
import { LogModel, PAGE, splitLines, streamOf } from '../../services/web/src/log-model.js';
import { COLLAPSED_PX, GAP_PX, layoutAxis, placeBlocks } from '../../services/web/src/waterfall-layout.js';

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

  it('carries what a line opens onto the next lines until a reset', () => {
    const l1 = '\x1b[1;32mgreen starts';
    const l2 = 'still green';
    const l3 = 'ends\x1b[0m here';
    const s1 = ansiEnd(l1);
    expect(parseAnsi(l2, s1)).toEqual([{ text: 'still green', cls: 'af2 a-bold' }]);
    // A line with no escape leaves the very state it was given (nothing to work out again).
    expect(ansiEnd(l2, s1)).toBe(s1);
    expect(parseAnsi(l3, s1)).toEqual([
      { text: 'ends', cls: 'af2 a-bold' },
      { text: ' here', cls: '' },
    ]);
    expect(ansiEnd(l3, s1)).toBe(PLAIN);
    expect(parseAnsi('after', ansiEnd(l3, s1))).toEqual([{ text: 'after', cls: '' }]);
    // Partial resets keep the rest open; a 256-colour background carries as well.
    const s2 = ansiEnd('\x1b[4;31;48;5;196mx\x1b[24;39m', PLAIN);
    expect(parseAnsi('y', s2)).toEqual([{ text: 'y', cls: '', background: 'rgb(255,0,0)' }]);
    // A line's own state never leaks into the one it started from.
    expect(parseAnsi('z', PLAIN)).toEqual([{ text: 'z', cls: '' }]);
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
  /** Runs `fn` where any read over REST fails the test: only live lines feed the model. */
  const offline = (fn: () => void) => {
    const real = globalThis.fetch;
    globalThis.fetch = (() => {
      throw new Error('no read expected');
    }) as unknown as typeof fetch;
    try {
      fn();
    } finally {
      globalThis.fetch = real;
    }
  };

  it('appends live lines that continue a page, and grows its count', () => {
    const m = new LogModel(1, 0);
    offline(() => {
      m.append({ logid: 1, firstline: 0, content: 'oa\nob\n' });
      m.append({ logid: 1, firstline: 2, content: 'oc\n' });
      expect(m.numLines).toBe(3);
      expect([m.line(0), m.line(1), m.line(2)]).toEqual(['oa', 'ob', 'oc']);
    });
  });

  it('carries colours down the lines it holds, each stdio stream on its own', () => {
    const m = new LogModel(1, 0, true);
    offline(() => {
      m.append({ logid: 1, firstline: 0, content: 'o\x1b[31mred\neerr\noout\x1b[0m\noplain\n' });
      const cls = (i: number) => {
        const [, body] = streamOf(m.line(i)!, true);
        return parseAnsi(body, m.startState(i)).map((s) => s.cls);
      };
      expect([cls(0), cls(1), cls(2), cls(3)]).toEqual([['af1'], [''], ['af1'], ['']]);
      // A line arriving later starts where the one above left off.
      m.append({ logid: 1, firstline: 4, content: 'h\x1b[7;33mhdr\no\x1b[34mblue\nomore\nhnext\n' });
      expect([cls(5), cls(6), cls(7)]).toEqual([['af4'], ['af4'], ['af3']]);
    });
  });

  /** Asks the model for lines `from` to `to` and waits for the change their read brings. */
  const readLines = (m: LogModel, from: number, to: number) =>
    new Promise<void>((resolve) => {
      m.onChange = resolve;
      m.want(from, to);
    });

  it('carries colours across pages, and works a page out again once the page above arrives', async () => {
    const page0 = Array.from({ length: PAGE }, (_, i) => (i === PAGE - 1 ? '\x1b[35mlast' : `l${i}`));
    const m = new LogModel(1, PAGE + 1, false);
    const real = globalThis.fetch;
    globalThis.fetch = (async (url: string) => {
      const first = Number(new URL(url, 'http://x').searchParams.get('offset'));
      const content = first === 0 ? `${page0.join('\n')}\n` : 'next\n';
      return new Response(JSON.stringify({ logchunks: [{ firstline: first, content }] }));
    }) as unknown as typeof fetch;
    const read = (from: number) => readLines(m, from, from + 1);
    try {
      // The end opened first: the page above is not held, so its line starts plain...
      await read(PAGE);
      expect(parseAnsi(m.line(PAGE)!, m.startState(PAGE))).toEqual([{ text: 'next', cls: '' }]);
      // ...until that page is read: then the colour its last line opened carries on.
      await read(0);
      expect(parseAnsi(m.line(PAGE)!, m.startState(PAGE))).toEqual([{ text: 'next', cls: 'af5' }]);
      expect(m.startState(PAGE - 1)).toBe(PLAIN);
    } finally {
      globalThis.fetch = real;
    }
  });

  /** Runs `fn` where every read over REST answers the first lines `content`; the URLs asked. */
  const reading = async (content: string, fn: (asked: string[]) => Promise<void>) => {
    const asked: string[] = [];
    const real = globalThis.fetch;
    globalThis.fetch = (async (url: string) => {
      asked.push(url);
      return new Response(JSON.stringify({ logchunks: [{ firstline: 0, content }] }));
    }) as unknown as typeof fetch;
    try {
      await fn(asked);
    } finally {
      globalThis.fetch = real;
    }
  };

  it('leaves a gap to be read, never fills it with later lines', async () => {
    const m = new LogModel(1, 0);
    await reading('o1\no2\no3\no4\n', async (asked) => {
      m.append({ logid: 1, firstline: 0, content: 'o1\n' });
      m.append({ logid: 1, firstline: 3, content: 'o4\n' });
      expect(m.line(3)).toBeNull();
      expect(m.numLines).toBe(4);
      await readLines(m, 0, 4);
      expect(asked).toEqual([`api/v2/logs/1/contents?offset=0&limit=${PAGE}`]);
      expect([0, 1, 2, 3].map((i) => m.line(i))).toEqual(['o1', 'o2', 'o3', 'o4']);
    });
  });

  it('continues a page it read with the live lines that came meanwhile, past where the read ended', async () => {
    const m = new LogModel(1, 0);
    // The read answers what the log held when it was asked: three lines.
    await reading('o1\no2\no3\n', async (asked) => {
      m.append({ logid: 1, firstline: 0, content: 'o1\n' });
      // Lines 4 and 5 come live before the read of lines 2 and 3 lands (one was missed).
      m.append({ logid: 1, firstline: 3, content: 'o4\no5\n' });
      expect(m.line(3)).toBeNull();
      await readLines(m, 0, 5);
      expect([0, 1, 2, 3, 4].map((i) => m.line(i))).toEqual(['o1', 'o2', 'o3', 'o4', 'o5']);
      // The page is whole: nothing to read again, and the next live line continues it.
      m.append({ logid: 1, firstline: 5, content: 'o6\n' });
      expect(m.line(5)).toBe('o6');
      expect(asked).toHaveLength(1);
    });
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

describe("a build's text and links", () => {
  const src = 'services/web/src';
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f))
    .map((f) => ({ f, text: readFileSync(join(src, f), 'utf8') }));

  it('links only http and https (safeUrl): javascript:, data: and the like show as text', async () => {
    (globalThis as { document?: unknown }).document = { baseURI: 'http://ci.example.test/' };
    // A .tsx of the UI's own build (services/web/tsconfig.json): vitest compiles it, this
    // project's tsc does not read it, so the module is named by a value.
    const page = '../../services/web/src/pages/build.tsx';
    const { safeUrl } = (await import(page)) as { safeUrl: (url: string) => string | null };
    for (const bad of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
    ])
      expect(safeUrl(bad), bad).toBeNull();
    expect(safeUrl('https://ci.example.test/report')).toBe('https://ci.example.test/report');
    expect(safeUrl('/api/v2/artifacts/1/raw')).toBe('http://ci.example.test/api/v2/artifacts/1/raw');
  });

  it('never writes HTML: no innerHTML in any form, and every href is one the UI made or checked', () => {
    for (const { f, text } of files) {
      expect(text, f).not.toMatch(
        /dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|document\.write/,
      );
      // The UI's own routes (href(), `#...`), the API's (apiUrl()) and the login paths'
      // (authUrl()), a line's anchor (link), and a build's links once safeUrl has passed them
      // (safe).
      for (const m of text.matchAll(/href=\{([^}]*)\}/g))
        expect(m[1], `${f}: href={${m[1]}}`).toMatch(/^(href\(|apiUrl\(|authUrl\(|`#\$\{|link\b|safe$)/);
    }
    expect(files.map((x) => x.f)).toContain(join('pages', 'build.tsx'));
  });
});

describe('the waterfall axis', () => {
  // 60 px per minute: a pixel a second.
  it('draws busy times at the scale, newest at the top, and collapses long idle stretches', () => {
    const top = 10_000;
    const axis = layoutAxis(
      [
        { start: 9_900, end: 9_950 },
        { start: 9_920, end: null },
        { start: 5_000, end: 5_030 },
        { start: 4_990, end: 5_010 },
      ],
      top,
      60,
    );
    expect(axis.segments).toEqual([
      { hi: top, lo: 9_900, y: 0, idleAbove: 0 },
      { hi: 5_030, lo: 4_990, y: 100 + COLLAPSED_PX, idleAbove: 9_900 - 5_030 },
    ]);
    expect(axis.y(top)).toBe(0);
    expect(axis.y(9_950)).toBe(50);
    expect(axis.y(5_030)).toBe(100 + COLLAPSED_PX);
    expect(axis.y(4_990)).toBe(140 + COLLAPSED_PX);
    expect(axis.height).toBe(140 + COLLAPSED_PX);
    // A time inside the collapsed stretch sits at its lower edge.
    expect(axis.y(7_000)).toBe(100 + COLLAPSED_PX);
  });

  it('keeps an idle stretch shorter than the gap at the scale, and moves nothing above when older builds come', () => {
    const spans = [{ start: 900, end: 1_000 }];
    const older = [...spans, { start: 800 - GAP_PX, end: 900 - GAP_PX }];
    const a = layoutAxis(spans, 1_000, 60);
    const b = layoutAxis(older, 1_000, 60);
    expect(b.segments).toHaveLength(1);
    expect(b.y(950)).toBe(a.y(950));
    expect(b.height).toBe(200 + GAP_PX);
  });

  it('puts blocks that overlap side by side, each group with its own lane count', () => {
    const placed = placeBlocks(
      [
        { id: 1, top: 0, bottom: 100 },
        { id: 2, top: 10, bottom: 12 },
        { id: 3, top: 30, bottom: 40 },
        { id: 4, top: 200, bottom: 300 },
      ],
      16,
      4,
    );
    expect(placed.get(1)).toEqual({ top: 0, height: 100, lane: 0, lanes: 2 });
    // Shorter than the smallest block: drawn 16 px tall, so 3 fits below it in the same lane.
    expect(placed.get(2)).toEqual({ top: 10, height: 16, lane: 1, lanes: 2 });
    expect(placed.get(3)).toEqual({ top: 30, height: 16, lane: 1, lanes: 2 });
    expect(placed.get(4)).toEqual({ top: 200, height: 100, lane: 0, lanes: 1 });
    const crowded = placeBlocks(
      [0, 1, 2, 3, 4].map((i) => ({ id: i, top: i, bottom: 50 + 10 * i })),
      16,
      2,
    );
    expect([...crowded.values()].map((p) => [p.lane, p.lanes])).toEqual([
      [0, 2],
      [1, 2],
      [0, 2],
      [1, 2],
      [0, 2],
    ]);
  });
});

describe('onTick', () => {
  it('ticks every cell of a period on one timer, stopped when the last cell leaves', () => {
    vi.useFakeTimers();
    try {
      const seen: string[] = [];
      const offs = ['a', 'b', 'c'].map((name) => onTick(1000, () => seen.push(name)));
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(1000);
      expect(seen).toEqual(['a', 'b', 'c']);
      offs[0]!();
      vi.advanceTimersByTime(1000);
      expect(seen.slice(3)).toEqual(['b', 'c']);
      const other = onTick(30_000, () => seen.push('slow'));
      expect(vi.getTimerCount()).toBe(2);
      for (const off of [...offs.slice(1), other]) off();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
