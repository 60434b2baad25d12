// A try job file as `buildbot try --connect=ssh` delivers it into a Try_Jobdir's jobdir
// (buildbot/clients/tryclient.py createJobfile, read as buildbot/schedulers/trysched.py
// parseJob reads it): netstrings, the first the format's version. Versions 1 to 4 are the
// fields as netstrings in order (jobid, branch, baserev, patch_level, patch_body, then from
// 2 repository and project, from 3 who, from 4 comment), then one netstring per builder;
// version 5 is one netstring of JSON with the patch as text, version 6 the same with the
// patch base64-encoded (`patch_body_base64`, which `buildbot try` 3.7 writes when the patch
// is not UTF-8). Pure: the scheduler (try-jobdir.ts) reads the file and adds the build set.

/**
 * The largest job file read, in bytes: past it the job is refused with a log line. Buildbot
 * refuses one over Twisted's NetstringReceiver.MAX_LENGTH, 99,999 bytes unless master.cfg
 * raises it; 1 MiB holds a patch of some ten thousand changed lines, and keeps what one job
 * can make the master hold (the file, the patch stored in the database, the log that shows
 * it) small. The same bound holds for a patch sent to a Try_Userpass scheduler.
 */
export const MAX_TRY_JOB_BYTES = 1024 * 1024;

export interface TryJob {
  jobid: string;
  branch: string | null;
  baserev: string | null;
  patchLevel: number;
  /** The patch as text: Flotilla keeps UTF-8 patches only (docs/security.md). */
  patchBody: string;
  repository: string;
  project: string;
  who: string;
  comment: string;
  builderNames: string[];
  properties: Record<string, unknown>;
}

export class BadJobFile extends Error {
  override name = 'BadJobFile';
}

/** The netstrings of `data`, in order; throws BadJobFile on any malformed one. */
export function netstrings(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const colon = data.indexOf(0x3a, at);
    const digits = colon < 0 ? '' : data.subarray(at, colon).toString('latin1');
    if (!/^(0|[1-9][0-9]{0,9})$/.test(digits)) throw new BadJobFile('unable to parse netstrings');
    const end = colon + 1 + Number(digits);
    if (end >= data.length || data[end] !== 0x2c) throw new BadJobFile('unable to parse netstrings');
    out.push(data.subarray(colon + 1, end));
    at = end + 1;
  }
  if (out.length === 0) throw new BadJobFile('could not find any complete netstrings');
  return out;
}

const V1_KEYS = ['jobid', 'branch', 'baserev', 'patch_level', 'patch_body'];
const KEYS = [V1_KEYS, [...V1_KEYS, 'repository', 'project']];
KEYS.push([...KEYS[1]!, 'who'], [...KEYS[1]!, 'who', 'comment']);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text of a netstring or a JSON field; a patch that is not UTF-8 is refused. */
function text(b: Buffer | string, what: string): string {
  if (typeof b === 'string') return b;
  try {
    return utf8.decode(b);
  } catch {
    throw new BadJobFile(`${what} is not UTF-8 text`);
  }
}

const str = (v: unknown, key: string): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new BadJobFile(`${key} is not a string`);
  return v;
};

/** A job file's contents as the job it asks for. */
export function parseTryJob(data: Buffer): TryJob {
  if (data.length > MAX_TRY_JOB_BYTES)
    throw new BadJobFile(`the job file is over ${MAX_TRY_JOB_BYTES} bytes`);
  const [first, ...rest] = netstrings(data);
  const version = first!.toString('latin1');
  let fields: Record<string, unknown>;
  if (/^[1-4]$/.test(version)) {
    const keys = KEYS[Number(version) - 1]!;
    if (rest.length < keys.length) throw new BadJobFile(`version ${version} needs ${keys.length} fields`);
    fields = Object.fromEntries(keys.map((k, i) => [k, text(rest[i]!, k)]));
    fields.builderNames = rest.slice(keys.length).map((b) => text(b, 'a builder name'));
  } else if (version === '5' || version === '6') {
    try {
      fields = JSON.parse(text(rest[0] ?? Buffer.alloc(0), 'the job'));
    } catch (err) {
      if (err instanceof BadJobFile) throw err;
      throw new BadJobFile('unable to parse JSON');
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
      throw new BadJobFile('the job is not a JSON object');
    if (version === '6') {
      const b64 = str(fields.patch_body_base64, 'patch_body_base64');
      fields.patch_body = text(Buffer.from(b64, 'base64'), 'the patch');
    }
  } else throw new BadJobFile(`unknown version '${version.slice(0, 20)}'`);

  const level = Number(fields.patch_level);
  if (!Number.isInteger(level) || level < 0 || level > 100)
    throw new BadJobFile('patch_level is not a level');
  const builders = fields.builderNames;
  if (!Array.isArray(builders) || !builders.every((b) => typeof b === 'string'))
    throw new BadJobFile('builderNames is not a list of names');
  const properties = fields.properties ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    throw new BadJobFile('properties is not a dictionary');
  return {
    jobid: str(fields.jobid, 'jobid'),
    branch: str(fields.branch, 'branch') || null,
    baserev: str(fields.baserev, 'baserev') || null,
    patchLevel: level,
    patchBody: str(fields.patch_body, 'patch_body'),
    repository: str(fields.repository, 'repository'),
    project: str(fields.project, 'project'),
    who: str(fields.who, 'who'),
    comment: str(fields.comment, 'comment'),
    builderNames: builders,
    properties: properties as Record<string, unknown>,
  };
}
