// Buildbot's Interpolate forms, parsed and rendered as Buildbot 3.7 renders them
// (buildbot/process/properties.py): which branch each op takes for a missing key, a key
// with a false-ish value and a key with a true value; nesting; Python's str() of values;
// what is a configuration error and what is left alone as ordinary text.
import { describe, expect, it } from 'vitest';
import { InterpolationError, parse, renderParts, type Sources } from '../../services/core/interpolate.js';

const props: Record<string, unknown> = {
  name: 'flotilla',
  empty: '',
  zero: 0,
  none: null,
  yes: true,
  list: ['a', "it's"],
  dict: { k: 1.5 },
  n: 3,
};

const sources: Sources = {
  prop: (k) => (k in props ? { value: props[k] } : undefined),
  src: (cb, attr) =>
    cb === 'lib' && attr === 'revision'
      ? { value: 'abc123' }
      : cb === '' && attr === 'branch'
        ? { value: 'main' }
        : undefined,
  kw: (k) => (k === 'x' ? { value: 'X' } : undefined),
  worker: (k) => (k === 'host' ? { value: 'box1' } : undefined),
  secret: (k) => {
    if (k === 'token') return 's3cr3t';
    throw new InterpolationError(`secret key ${k} is not found in any provider`);
  },
};

const r = (t: string) => renderParts(parse(t), sources);

describe('Interpolate', () => {
  it('fills properties as Python str() writes them, None as nothing', () => {
    expect(r('%(prop:name)s-%(prop:n)s')).toBe('flotilla-3');
    expect(r('[%(prop:none)s][%(prop:missing)s]')).toBe('[][]');
    expect(r('%(prop:yes)s %(prop:list)s %(prop:dict)s')).toBe(`True ['a', "it's"] {'k': 1.5}`);
  });

  it('-default: the default only when the key is missing', () => {
    expect(r('%(prop:missing:-dflt)s')).toBe('dflt');
    expect(r('%(prop:empty:-dflt)s|%(prop:zero:-dflt)s|%(prop:none:-dflt)s')).toBe('|0|');
  });

  it('~default: the default when missing or false in Python', () => {
    expect(r('%(prop:missing:~d)s %(prop:empty:~d)s %(prop:zero:~d)s %(prop:none:~d)s')).toBe('d d d d');
    expect(r('%(prop:name:~d)s')).toBe('flotilla');
  });

  it('+replacement: the replacement when the key exists, whatever its value', () => {
    expect(r('%(prop:empty:+yes)s|%(prop:missing:+yes)s')).toBe('yes|');
  });

  it('?|a|b on existence and #?|a|b on truth', () => {
    expect(r('%(prop:empty:?|there|not)s %(prop:missing:?|there|not)s')).toBe('there not');
    expect(r('%(prop:empty:#?|true|false)s %(prop:name:#?|true|false)s')).toBe('false true');
  });

  it('nests templates in defaults and branches', () => {
    expect(r('%(prop:missing:-%(prop:name)s/%(kw:x)s)s')).toBe('flotilla/X');
    expect(r('%(prop:yes:#?|(%(prop:n)s)|no)s')).toBe('(3)');
  });

  it('reads source stamps by codebase, keywords, worker info and secrets', () => {
    expect(r('%(src:lib:revision)s %(src::branch)s %(src::revision:-none)s')).toBe('abc123 main none');
    expect(r('%(kw:x)s@%(worker:host)s %(secret:token)s')).toBe('X@box1 s3cr3t');
  });

  it('a missing secret is an error, not an empty string', () => {
    expect(() => r('%(secret:nope:-fallback)s')).toThrow('secret key nope is not found in any provider');
  });

  it('%% is a percent sign; other percent signs are text', () => {
    expect(r('100%% of %(prop:name)s')).toBe('100% of flotilla');
    expect(r('date +%Y-%m-%d %(unclosed')).toBe('date +%Y-%m-%d %(unclosed');
    expect(r('%(prop:name)d')).toBe('%(prop:name)d');
  });

  it('refuses what Buildbot refuses at config time', () => {
    const bad = {
      '%(nosel)s': 'without selector',
      '%(foo:x)s': "invalid Interpolate selector 'foo'",
      '%(prop:a b)s': 'Property name must be alphanumeric',
      '%(src:cb)s': 'Must specify both codebase and attribute',
      '%(prop:x:*d)s': "invalid Interpolate default type '*'",
      '%(prop:x:?|a)s': 'invalid Interpolate ternary expression',
      '%(prop:x:?(a)(b))s': 'invalid Interpolate ternary delimiter',
    };
    for (const [t, message] of Object.entries(bad)) expect(() => parse(t), t).toThrow(message);
    expect(() => parse('%(kw:y)s', new Set(['x']))).toThrow("no keyword 'y'");
  });
});
