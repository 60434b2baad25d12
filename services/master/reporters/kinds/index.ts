// The reporter kinds, by the `type` of their configuration: one line each. The type makes the
// list complete: a kind the configuration schema knows (core/config/master-config/reporters/)
// and this list lacks does not compile.
import type { ReporterConfig } from '../../../core/config/master-config.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { http } from './http.js';
import type { ReporterKind } from './kind.js';
import { mail } from './mail.js';

type ReporterKinds = { [T in ReporterConfig['type']]: ReporterKind<Extract<ReporterConfig, { type: T }>> };

const KINDS: ReporterKinds = { github, gitlab, http, mail };

export function reporterKind<C extends ReporterConfig>(config: C): ReporterKind<C> {
  return KINDS[config.type] as unknown as ReporterKind<C>;
}
