// The try job file parser (pure): every version Buildbot 3.7 reads, and the refusals.
import { describe, expect, it } from 'vitest';
import { BadJobFile, MAX_TRY_JOB_BYTES, parseTryJob } from '../../../services/master/schedulers/try-job.js';

const ns = (s: string | Buffer) => {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from(`${b.length}:`), b, Buffer.from(',')]);
};
const file = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map(ns));

describe('parseTryJob', () => {
  it('reads version 4: the fields in order, then the builders', () => {
    const job = parseTryJob(file('4', 'j', '', 'abc', '1', 'diff\n', 'r', 'p', 'me', 'why', 'b1', 'b2'));
    expect(job).toEqual({
      jobid: 'j',
      branch: null,
      baserev: 'abc',
      patchLevel: 1,
      patchBody: 'diff\n',
      repository: 'r',
      project: 'p',
      who: 'me',
      comment: 'why',
      builderNames: ['b1', 'b2'],
      properties: {},
    });
    expect(parseTryJob(file('1', 'j', 'main', '', '0', 'd')).builderNames).toEqual([]);
  });

  it('reads versions 5 (JSON, the patch as text) and 6 (the patch in base64)', () => {
    const fields = { jobid: 'j', branch: 'main', baserev: 'abc', patch_level: 1, builderNames: ['b1'] };
    const v5 = parseTryJob(file('5', JSON.stringify({ ...fields, patch_body: 'é\n', properties: { a: 1 } })));
    expect(v5).toMatchObject({ branch: 'main', patchBody: 'é\n', properties: { a: 1 }, who: '' });
    const b64 = Buffer.from('d\n').toString('base64');
    expect(parseTryJob(file('6', JSON.stringify({ ...fields, patch_body_base64: b64 }))).patchBody).toBe(
      'd\n',
    );
  });

  it.each([
    ['no netstring', Buffer.from('5:abc'), /netstrings/],
    ['a bad length', Buffer.from('x:5,'), /netstrings/],
    ['an unknown version', file('7', '{}'), /unknown version '7'/],
    ['bad JSON', file('5', '{'), /JSON/],
    [
      'a patch not UTF-8',
      file('6', JSON.stringify({ patch_level: 1, builderNames: [], patch_body_base64: '/w==' })),
      /UTF-8/,
    ],
    [
      'a level that is not one',
      file('5', JSON.stringify({ patch_level: 'x', builderNames: [] })),
      /patch_level/,
    ],
    [
      'builders not a list',
      file('5', JSON.stringify({ patch_level: 1, builderNames: 'b1' })),
      /builderNames/,
    ],
    ['too few fields', file('2', 'j', 'main'), /needs 7 fields/],
    ['a file over the bound', Buffer.alloc(MAX_TRY_JOB_BYTES + 1, 0x31), /over/],
  ])('refuses %s', (_what, data, message) => {
    expect(() => parseTryJob(data)).toThrow(BadJobFile);
    expect(() => parseTryJob(data)).toThrow(message);
  });
});
