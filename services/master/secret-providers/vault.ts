// Buildbot's SecretInVault: a secret is a key of a secret in Vault's KV secrets engine, read
// over Vault's HTTP API with a token.
//
// Buildbot facts (buildbot/secrets/providers/vault.py HashiCorpVaultSecretProvider, 3.7): the
// name is `path` or `path/key` (split at the last `/`; key default `value`); version 1 reads
// GET <vaultServer>/v1/<secretsmount>/<path> and takes data.<key>, version 2 reads
// GET <vaultServer>/v1/<secretsmount>/data/<path> and takes data.data.<key>; the request
// carries the header X-Vault-Token; an answer other than 200, or no such key, is an error.
// Where we differ: a 404 (Vault's answer for a path with no secret) or no such key is "not in
// this provider", so the next provider is asked; any other failure is logged and the secret
// is missing (Buildbot raises). Each path segment is URL-encoded, so a name cannot reach
// another API path.
import type { SecretsProviderConfig } from '../../core/config/master-config.js';
import { readSecret } from '../../core/config/secret-source.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { type PrefetchedProvider, prefetched } from './prefetched.js';

type VaultConfig = Extract<SecretsProviderConfig, { type: 'vault' }>;

const VAULT_TIMEOUT_MS = 10_000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function vaultProvider(
  cfg: VaultConfig,
  env: Record<string, string | undefined>,
  log?: Logger,
): PrefetchedProvider {
  const token = readSecret(
    'secrets (vault)',
    { fromEnv: cfg.vaultToken_env, fromFile: cfg.vaultToken_file },
    env,
  )!;
  const server = cfg.vaultServer.replace(/\/+$/, '');
  const read = async (name: string): Promise<string | undefined> => {
    const slash = name.lastIndexOf('/');
    const path = slash < 0 ? name : name.slice(0, slash);
    const key = slash < 0 ? 'value' : name.slice(slash + 1);
    const segments = path.split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
    const encoded = segments.map(encodeURIComponent).join('/');
    const mount = cfg.secretsmount.split('/').map(encodeURIComponent).join('/');
    const url = `${server}/v1/${mount}/${cfg.apiVersion === 2 ? 'data/' : ''}${encoded}`;
    const res = await fetch(url, {
      headers: { 'x-vault-token': token },
      signal: AbortSignal.timeout(VAULT_TIMEOUT_MS),
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`Vault answered ${res.status} for ${cfg.secretsmount}/${path}`);
    const body: unknown = await res.json();
    const outer = isObject(body) ? body.data : undefined;
    const data = cfg.apiVersion === 2 && isObject(outer) ? outer.data : outer;
    const value = isObject(data) ? data[key] : undefined;
    if (value === undefined) return undefined;
    return typeof value === 'string' ? value : JSON.stringify(value);
  };
  return prefetched('vault', read, log);
}
