// The resources the UI reads, as the REST API v2 returns them (only the fields it uses).

export interface Builder {
  builderid: number;
  name: string;
  description: string | null;
  tags: string[];
  masterids: number[];
  /** Buildbot 4.3: the builder's project, if it has one. */
  projectid: number | null;
}

/** Buildbot 4.3's project: builders name theirs (Builder.projectid). */
export interface Project {
  projectid: number;
  name: string;
  slug: string;
  active: boolean | null;
  description: string | null;
  description_format: string | null;
  description_html: string | null;
}

export interface Build {
  buildid: number;
  number: number;
  builderid: number;
  buildrequestid: number;
  workerid: number | null;
  masterid: number;
  started_at: number;
  complete_at: number | null;
  complete: boolean;
  state_string: string;
  results: number | null;
  /** Only those asked for with `property=`: `{name: [value, source]}`. */
  properties?: Record<string, [unknown, string]>;
}

export interface Step {
  stepid: number;
  number: number;
  name: string;
  buildid: number;
  started_at: number | null;
  complete_at: number | null;
  complete: boolean;
  state_string: string;
  results: number | null;
  urls: { name: string; url: string }[];
  hidden: boolean;
}

export interface Log {
  logid: number;
  name: string;
  slug: string;
  stepid: number;
  complete: boolean;
  num_lines: number;
  /** 's' stdio, 't' text, 'h' HTML, DELETED once retention removed its lines. */
  type: string;
}

/**
 * A log whose lines retention deleted (services/core/data/retention.ts): its row stays, with
 * the type Buildbot's janitor gives it and num_lines as it was; its contents are gone.
 */
export const DELETED = 'd';

export interface BuildRequest {
  buildrequestid: number;
  buildsetid: number;
  builderid: number;
  priority: number;
  claimed: boolean;
  claimed_at: number | null;
  claimed_by_masterid: number | null;
  complete: boolean;
  results: number | null;
  submitted_at: number;
  complete_at: number | null;
  waited_for: boolean;
}

export interface Buildset {
  bsid: number;
  external_idstring: string | null;
  reason: string;
  submitted_at: number;
  complete: boolean;
  complete_at: number | null;
  results: number | null;
  parent_buildid: number | null;
  parent_relationship: string | null;
  sourcestamps: SourceStamp[];
}

export interface SourceStamp {
  ssid: number;
  branch: string | null;
  revision: string | null;
  project: string;
  repository: string;
  codebase: string;
}

export interface Change {
  changeid: number;
  author: string;
  committer: string | null;
  comments: string;
  branch: string | null;
  revision: string | null;
  revlink: string | null;
  when_timestamp: number;
  files: string[];
  repository: string;
  project: string;
  codebase: string;
  category: string | null;
}

export interface Worker {
  workerid: number;
  name: string;
  paused: boolean;
  graceful: boolean;
  connected_to: { masterid: number }[];
  configured_on: { masterid: number; builderid: number }[];
  workerinfo: Record<string, unknown>;
}

export interface Master {
  masterid: number;
  name: string;
  active: boolean;
  last_active: number;
}

export interface BuildData {
  name: string;
  length: number;
  source: string;
}

export interface Scheduler {
  schedulerid: number;
  name: string;
  enabled: boolean;
  master: Master | null;
}

export interface ChangeSource {
  changesourceid: number;
  name: string;
  master: Master | null;
}
