// What Buildbot 3.7 was recorded doing, kept in the repository as test data
// (test/fixtures/buildbot-3.7/README.md says where each file came from and how to record it
// again): a test reads these paths and nothing outside the repository, so a clone alone runs
// `npm test` (test/standalone.test.ts keeps it so).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const RECORDED = resolve(import.meta.dirname, '../fixtures/buildbot-3.7');

/** The schema a Buildbot 3.7 master creates on PostgreSQL (alembic revision 059, 39 tables). */
export const SCHEMA_SQL = `${RECORDED}/schema.sql`;
/** Every row of a Buildbot 3.7 master after real builds (data only; load after the schema). */
export const FIXTURE_SQL = `${RECORDED}/fixture.sql`;
/**
 * What Buildbot 4.3's migrations 060 to 067 do to a 3.7 database, alembic revision included
 * (test/fixtures/buildbot-4.3/README.md): load after SCHEMA_SQL for a Buildbot 4.3 database.
 */
export const UPGRADE_TO_4_3_SQL = resolve(RECORDED, '../buildbot-4.3/upgrade-059-to-067.sql');
/** The golden request/response cases, recorded from Buildbot on the fixture and adjusted by the contract. */
export const CASES_JSON = `${RECORDED}/cases.json`;

/**
 * One golden case. `path` is relative to /api/v2 and keeps its query string (`""` is the root);
 * `body` is the raw text of a POST.
 */
export interface GoldenCase {
  id: string;
  family: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  expect: {
    status: number;
    /** The media type alone, lower case; `(none)` when no Content-Type is expected. */
    contentType: string;
    /** Parsed JSON, or the exact text (raw logs, HEAD, plain-text errors). */
    body: unknown;
    /** Headers that must match exactly (content-disposition of raw logs). */
    headers?: Record<string, string>;
    /** Paths under the body (`error.message`) whose values are not compared, only their JSON type. */
    ignore?: string[];
  };
  /** exact: deep-equal; unordered: the envelope's list as a multiset; shape: JSON types only. */
  compare: 'exact' | 'unordered' | 'shape';
  /**
   * buildbot: Buildbot 3.7's own answer; buildbot-4.3: Buildbot 4.3's, as its source says it
   * (the note names where); contract / sane: where the contract overrides it.
   */
  rule: 'buildbot' | 'buildbot-4.3' | 'contract' | 'sane';
  /** Forces, rebuilds, cancels, pauses: they change the data, so they run last. */
  mutates?: boolean;
  /** What Buildbot did instead, for a contract or sane case. */
  note?: string;
}

/**
 * Buildbot 4.3's golden cases and the rows only 4.3 writes (projects), laid over the fixture:
 * written from Buildbot 4.3's source, not recorded (test/fixtures/buildbot-4.3/README.md).
 */
export const CASES_43_JSON = resolve(RECORDED, '../buildbot-4.3/cases.json');
export const FIXTURE_43_SQL = resolve(RECORDED, '../buildbot-4.3/fixture-additions.sql');

export function goldenCases43(): GoldenCase[] {
  return JSON.parse(readFileSync(CASES_43_JSON, 'utf8')) as GoldenCase[];
}

export function goldenCases(): GoldenCase[] {
  return JSON.parse(readFileSync(CASES_JSON, 'utf8')) as GoldenCase[];
}
