// Warning counting (services/master/builds/steps/warnings.ts) and Python's expressions as
// JavaScript's (services/core/python-regex.ts), as pure logic: the rules of Buildbot 3.7's
// WarningCountingShellCommand (buildbot/steps/shell.py) on lines given one by one. The
// builds that count warnings on real workers are in buildbot-steps.test.ts.
import { describe, expect, it } from 'vitest';
import { DEFAULT_WARNING_PATTERN } from '../../../services/core/config/master-config/warning-steps.js';
import { matchAtStart, pythonRegExp } from '../../../services/core/python-regex.js';
import {
  MAX_KEPT_BYTES,
  parseSuppressions,
  WarningCounter,
} from '../../../services/master/builds/steps/warnings.js';

const counter = (o: Partial<ConstructorParameters<typeof WarningCounter>[0]> = {}) =>
  new WarningCounter({
    warningPattern: DEFAULT_WARNING_PATTERN,
    warningExtractor: 'whole_line',
    directoryEnterPattern: "Entering directory '(.*)'",
    directoryLeavePattern: 'Leaving directory',
    ...o,
  });

describe("Python's expressions", () => {
  it('take leading inline flags and named groups, and match at the start as re.match', () => {
    const re = pythonRegExp('(?i).*warning[: ].*');
    expect(re.flags).toBe('i');
    expect(matchAtStart(re, 'x WARNING: y')).not.toBeNull();
    expect(matchAtStart(pythonRegExp('warn'), 'a warn')).toBeNull();
    expect(matchAtStart(pythonRegExp('(?P<f>\\w+):(?P=f)'), 'ab:ab')?.groups?.f).toBe('ab');
    expect(matchAtStart(pythonRegExp('\\Aab\\Z'), 'ab')).not.toBeNull();
    expect(matchAtStart(pythonRegExp('\\Aab\\Z'), 'ab\n')).toBeNull();
    expect(() => pythonRegExp('(?x)a b')).toThrow(/no JavaScript form/);
  });
});

describe('warning counting', () => {
  it('counts the lines the pattern matches at their start, whatever their stream', () => {
    const c = counter();
    for (const [s, l] of [
      ['o', 'cc: warning: a'],
      ['e', 'Warning: b'],
      ['h', ' argv: warning c'],
      ['o', 'no warnings here'],
      ['o', 'x'.repeat(16385) + ' warning: too long, not looked at'],
    ] as const)
      c.line(s, l);
    expect(c.count).toBe(3);
    expect(c.logText()).toBe('cc: warning: a\nWarning: b\n argv: warning c\n');
  });

  it("suppresses by file (under make's directories), text and line range", () => {
    const c = counter({ warningPattern: '(.*?):([0-9]+): warning: (.*)', warningExtractor: 'regexp_groups' });
    c.suppress(parseSuppressions('# comment\n\nsrc/gen/.* : .*\nsrc/a.c : unused : 3-4\nsrc/b.c:x:9\n'));
    for (const l of [
      "make: Entering directory 'src'",
      "make: Entering directory 'gen'",
      'g.c:1: warning: generated',
      "make: Leaving directory 'gen'",
      'a.c:3: warning: unused x',
      'a.c:5: warning: unused y',
      'b.c:9: warning: x marks',
      'b.c:10: warning: x marks',
      "make: Leaving directory 'src'",
      'gen/g.c:1: warning: outside',
    ])
      c.line('o', l);
    expect(c.logText()).toBe(
      'a.c:5: warning: unused y\nb.c:10: warning: x marks\ngen/g.c:1: warning: outside\n',
    );
  });

  it('keeps at most MAX_KEPT_BYTES of warning lines, and still counts the rest', () => {
    const c = counter();
    const line = `warning: ${'x'.repeat(1000)}`;
    const n = Math.ceil(MAX_KEPT_BYTES / line.length) + 10;
    for (let i = 0; i < n; i++) c.line('o', line);
    expect(c.count).toBe(n);
    const text = c.logText();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_KEPT_BYTES + 100);
    expect(text).toMatch(/more warnings not kept/);
  });
});
