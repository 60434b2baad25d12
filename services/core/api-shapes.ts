// JSON shapes that the API serves and the web UI (services/web) reads, typed once for both
// sides, as core/protocol types the master-worker messages. The UI imports types only from
// here (nothing of this module runs in the browser), so it holds no code.

/** A control action the UI offers a button for. */
export type UiAction = 'force' | 'stop' | 'rebuild' | 'cancel' | 'worker-control' | 'enable-scheduler';

/** Per action: false when the authz rules refuse it to this user whatever its target. */
export type UiPermissions = Record<UiAction, boolean>;

/** GET /config (Buildbot's web UI settings), with `permissions` of ours. */
export interface UiConfig {
  /** Buildbot's auth dict; `token_login` (ours): a token logs in too, beside the passwords. */
  auth: { name: string; oauth2?: boolean; token_login?: boolean };
  authz: Record<string, never>;
  buildbotURL: string;
  title: string;
  titleURL: string;
  multiMaster: boolean;
  /** `{anonymous: true}`, or the session's user: username, email, full_name, groups. */
  user: Record<string, unknown>;
  /** The roles the user has from who they are (owner roles come per build). */
  roles: string[];
  permissions: UiPermissions;
  avatar_methods: unknown[];
  versions: unknown[];
}

/** A `logs/<logid>/lines` event's message: the logchunk shape of /logs/<logid>/contents. */
export interface LogLinesMessage {
  logid: number;
  firstline: number;
  content: string;
}

/** One field of a force scheduler's form, as `all_fields` lists it (Buildbot's getSpec). */
export interface ForceFieldSpec {
  name: string;
  fullName: string | null;
  label: string;
  tablabel: string;
  type: 'fixed' | 'text' | 'textarea' | 'int' | 'bool' | 'username' | 'list' | 'nested';
  default: unknown;
  required: boolean;
  multiple: boolean;
  regex: null;
  hide: boolean;
  maxsize: number | null;
  autopopulate: unknown;
  /** list: the choices; nested: its layout and fields; others: kind-specific attributes. */
  choices?: unknown[];
  strict?: boolean;
  layout?: string;
  columns?: number;
  cols?: number;
  rows?: number;
  size?: number;
  fields?: ForceFieldSpec[];
  [extra: string]: unknown;
}

/** GET /forceschedulers/<name> */
export interface ForceSchedulerSpec {
  name: string;
  button_name: string;
  label: string;
  builder_names: string[];
  enabled: boolean;
  all_fields: ForceFieldSpec[];
}
