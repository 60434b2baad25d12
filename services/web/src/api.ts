// The REST API v2 and JSON-RPC, as any client uses them. Every URL is relative to the page
// (index.html is served at the UI's root), so the UI works behind a path prefix too.
// Errors are values the pages show: the status and the API's own words, and for a force
// form the message of each field.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** JSON-RPC validation errors, by field name (force forms). */
    readonly fields: Record<string, string> | null = null,
  ) {
    super(message);
  }
}

export type Query = Record<
  string,
  string | number | boolean | null | undefined | readonly (string | number)[]
>;

export interface Page<T> {
  items: T[];
  /** meta.total: how many match, whatever the page cut. */
  total: number;
}

/** Requests made since the page loaded (for the budget check: no whole-collection reads). */
export const requestLog: string[] = [];

export function apiUrl(path: string, query: Query = {}): string {
  return `api/v2/${path.replace(/^\//, '')}${queryString(query)}`;
}

/** A URL of the server's login paths (`auth/login`, ...), its query encoded. */
export function authUrl(path: string, query: Query = {}): string {
  return `auth/${path.replace(/^\//, '')}${queryString(query)}`;
}

function queryString(query: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let message = text.trim() || res.statusText;
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
    else if (body.error && typeof body.error === 'object') {
      const m = (body.error as { message?: unknown }).message;
      if (typeof m === 'string') message = m;
      else if (m && typeof m === 'object') {
        const fields = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]));
        return new ApiError(res.status, Object.values(fields).join('; '), fields);
      }
    }
  } catch {
    // not JSON: the text itself (Buildbot's plain `not found`)
  }
  return new ApiError(res.status, message);
}

async function getJson(url: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
  requestLog.push(url);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'the server cannot be reached');
  }
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Record<string, unknown>;
}

/** A collection, one page of it: the caller always names a limit. */
export async function getPage<T>(
  path: string,
  plural: string,
  query: Query & { limit: number },
  signal?: AbortSignal,
): Promise<Page<T>> {
  const body = await getJson(apiUrl(path, query), signal);
  const items = (body[plural] ?? []) as T[];
  const meta = body.meta as { total?: number } | undefined;
  return { items, total: meta?.total ?? items.length };
}

/** One resource; an ApiError 404 when it does not exist. */
export async function getOne<T>(
  path: string,
  plural: string,
  query: Query = {},
  signal?: AbortSignal,
): Promise<T> {
  const body = await getJson(apiUrl(path, query), signal);
  const item = (body[plural] as T[] | undefined)?.[0];
  if (item === undefined) throw new ApiError(404, 'not found');
  return item;
}

let rpcId = 0;

/** A control action: POST of a JSON-RPC call, as Buildbot's UI makes it. */
export async function rpc(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<unknown> {
  const url = apiUrl(path);
  requestLog.push(`POST ${url}`);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method, id: ++rpcId, params }),
    });
  } catch {
    throw new ApiError(0, 'the server cannot be reached');
  }
  if (!res.ok) throw await errorOf(res);
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw await errorOf(new Response(JSON.stringify(body), { status: 400 }));
  return body.result;
}
