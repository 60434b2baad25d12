// The small pieces under the event endpoints: Buildbot's path matching, Python's JSON and
// str() as the frames need them, stream ids, and an event read from the bus's text.
import { describe, expect, it } from 'vitest';
import { eventOf, heardEvent, sendable } from '../../../services/api/events/heard.js';
import { logLinesOf, matches, parsePattern } from '../../../services/api/events/paths.js';
import { pyDumpsOrdered, pyStr } from '../../../services/api/events/pyjson.js';
import { busPayload } from '../../../services/core/events/bus.js';
import { compareStreamIds, isAfter, parseStreamId } from '../../../services/core/events/stream.js';

describe('paths', () => {
  it.each([
    ['builds/*/*', 'builds/1/new', true],
    ['builds/*/*', 'builds/1', false],
    ['builds/*/*', 'builds/1/steps/2/new', false],
    ['*', 'builds', true],
    ['', 'builds', false],
    ['builds/', 'builds/1', false],
    ['builds/**', 'builds/1', false],
    ['builds/1/*', 'builds/1/new', true],
    ['builds/1/*', 'builds/10/new', false],
  ])('%s against %s: %s', (path, key, expected) => {
    expect(matches(parsePattern(path), key.split('/'))).toBe(expected);
  });

  it('recognizes only the exact log lines path', () => {
    expect(logLinesOf('logs/12/lines')).toBe(12);
    expect(logLinesOf('logs/*/lines')).toBeNull();
    expect(logLinesOf('logs/12/lines/x')).toBeNull();
    expect(logLinesOf('steps/1/logs/stdio/lines')).toBeNull();
  });
});

describe('Python JSON and str()', () => {
  it('writes compact or default separators, insertion order, escaped non-ASCII, Python floats', () => {
    const v = { z: 1, a: [1.5, 2, 1e-7, true, null], é: { '\n': '☃' } };
    expect(pyDumpsOrdered(v, 'compact')).toBe(
      '{"z":1,"a":[1.5,2,1e-07,true,null],"\\u00e9":{"\\n":"\\u2603"}}',
    );
    expect(pyDumpsOrdered(v, 'default')).toBe(
      '{"z": 1, "a": [1.5, 2, 1e-07, true, null], "\\u00e9": {"\\n": "\\u2603"}}',
    );
    expect(pyDumpsOrdered({ a: undefined, b: 1 }, 'compact')).toBe('{"b":1}');
  });

  it.each([
    ['x', 'x'],
    [12, '12'],
    [1.5, '1.5'],
    [true, 'True'],
    [null, 'None'],
    [['a', "b'c", 'd"e\'f', '\n'], `['a', "b'c", 'd"e\\'f', '\\n']`],
    [{ k: [1, { n: false }] }, "{'k': [1, {'n': False}]}"],
  ])('str(%j) is %s', (v, s) => {
    expect(pyStr(v)).toBe(s);
  });
});

describe('stream ids', () => {
  it('parse and order as Redis orders them', () => {
    expect(parseStreamId('1700000000000-5')).toEqual([1700000000000n, 5n]);
    expect(parseStreamId('17')).toEqual([17n, 0n]);
    for (const bad of ['', '-1', '1-', 'a-1', '1-2-3', ' 1-2']) expect(parseStreamId(bad)).toBeNull();
    expect(compareStreamIds([1n, 9n], [2n, 0n])).toBe(-1);
    expect(isAfter('10-0', '9-99')).toBe(true);
    expect(isAfter('9-99', '9-99')).toBe(false);
    expect(isAfter('x', '1-0')).toBe(false);
  });
});

describe('an event heard on the channel with ids', () => {
  // The text as PUBLISH_SCRIPT makes it: busPayload's JSON with the stream id as its last member.
  const withId = (key: string[], m: unknown, id: string) =>
    `${busPayload(key, m).slice(0, -1)},"id":"${id}"}`;

  it.each([
    [['builds', '12', 'new'], { buildid: 12, state_string: 'starting' }],
    [['steps', '3', 'finished'], { name: 'x","id":"9-9"}', nested: { id: '7-7' } }],
    [['changes', '1', 'new'], { comments: 'ünïcödé \u2028 "quoted" \\ back' }],
    [['builds', 'a\\b', 'new'], null],
    [
      ['builds', 'quote"d', 'new'],
      [1, 2, { id: '5-5' }],
    ],
    [['workers', '4', 'connected'], 'a string ending "}'],
  ])('%j reads as the whole text parsed', (key, m) => {
    const text = withId(key, m, '1732862400000-3');
    const e = heardEvent(text)!;
    const whole = eventOf(JSON.parse(text));
    expect({ key: e.key, parts: e.parts, id: e.id, message: e.message }).toEqual({
      key: whole.key,
      parts: whole.parts,
      id: whole.id,
      message: whole.message,
    });
    expect(e.id).toBe('1732862400000-3');
    expect(sendable(e)).toBe(true);
  });

  it('reads a text without an id, and drops what is not an event', () => {
    expect(heardEvent(busPayload(['builds', '1', 'new'], { a: 1 }))).toMatchObject({
      key: 'builds/1/new',
      id: undefined,
    });
    expect(heardEvent('not json')).toBeNull();
    expect(heardEvent('{"m":1}')).toBeNull();
    // Of the right shape at both ends but not JSON: its key and id are read, and it is never sent.
    const broken = heardEvent('{"k":"builds/1/new","m":{,"id":"1-1"}')!;
    expect(broken.id).toBe('1-1');
    expect(sendable(broken)).toBe(false);
  });
});

describe('stream ids compared as text', () => {
  it('order as they order parsed, for ids of every shape', () => {
    // Redis's shape of every length, then what is not quite it (core's isAfter judges those).
    const ids = [
      ...'0-0 0-1 1-0 9-9 10-0 10-10 99-1 100-0 1732862400000-0 1732862400000-3 1732862400000-12'.split(' '),
      ...'1732862400001-0 17328624000000-0 18446744073709551615-18446744073709551615'.split(' '),
      ...'5 05-1 1-01 x-1 1- -1 100000000000000000000-0 0-100000000000000000000'.split(' '),
      '',
    ];
    const parsed = (a: string, b: string) => {
      const [x, y] = [parseStreamId(a), parseStreamId(b)];
      return x !== null && y !== null && compareStreamIds(x, y) > 0;
    };
    for (const a of ids) for (const b of ids) expect([a, b, isAfter(a, b)]).toEqual([a, b, parsed(a, b)]);
  });
});
