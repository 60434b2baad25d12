// The shapes reporters pass around, after Buildbot's: a build dictionary (the build as the
// REST API answers it, plus its builder, build request, build set with source stamps,
// properties, url, and as asked its steps and previous build) and a report (what a generator
// makes of it for a sender: body, subject, type, results, builds, users, patches).
import type { ReportMode } from '../../core/config/master-config.js';
import type { SourceStampFacts } from '../../core/data/index.js';

export type Properties = Record<string, readonly [unknown, string]>;

/** A source stamp as Buildbot's reporters see it: the stamp, its patch, and any other field. */
export interface SourceStamp extends SourceStampFacts {
  patch: { body: string; author: string; comment: string; level: number; subdir: string } | null;
  [k: string]: unknown;
}

export interface BuildDict {
  [k: string]: unknown;
  buildid?: number;
  number?: number;
  builderid: number;
  buildrequestid?: number;
  complete: boolean;
  results: number | null;
  state_string?: string;
  started_at?: number | null;
  properties: Properties;
  builder: { builderid: number; name: string; tags: string[]; [k: string]: unknown };
  buildset: { bsid: number; sourcestamps: SourceStamp[]; [k: string]: unknown };
  buildrequest: Record<string, unknown>;
  url: string;
  steps?: Record<string, unknown>[];
  /** Present when a generator's mode compares with it (change, problem). */
  prev_build?: { results: number | null; [k: string]: unknown } | null;
}

export type MessageType = 'plain' | 'html' | 'json';

export interface Message {
  body: unknown;
  subject: string | null;
  type: MessageType;
}

export interface Report extends Message {
  results: number | null;
  builds: BuildDict[];
  users: string[];
  patches: NonNullable<SourceStamp['patch']>[];
}

/** What formatting needs beyond the build: the master's title and public URL, the mode. */
export interface FormatContext {
  title: string;
  buildbotURL: string;
  mode: readonly ReportMode[];
  users: string[];
  isBuildset: boolean;
}

/** A reporter's sending half (Buildbot's sendMessage). */
export interface Sender {
  /** Send what the reports say; resolves with how many messages went out (0: nothing to send). */
  send(reports: Report[]): Promise<number>;
  /** Let go of connections; idempotent. */
  close?(): void;
}
