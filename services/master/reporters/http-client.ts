// HTTP for the reporters that post to a server (github, gitlab, http): JSON in, a bounded
// wait, and a failure that says whether trying again can help. Connection errors, timeouts,
// 5xx, 408 and 429 are worth a retry (the job's backoff); any other answer outside 2xx (a bad
// token, an unknown repository or commit, a body the forge refuses) would fail the same way
// again, so the job gives up at once.

// A forge that takes longer than this is treated as down for this attempt.
export const REQUEST_TIMEOUT_MS = 10_000;

export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * Posts one status per source stamp: every stamp is tried, then the failures (if any) are
 * thrown as one, retryable when any of them is. A retry posts them all again, harmlessly:
 * forges show the latest status of each context. Returns how many were posted; `post`
 * returns false for a stamp it skips.
 */
export async function postEachStamp<T>(
  stamps: readonly T[],
  post: (stamp: T) => Promise<boolean>,
): Promise<number> {
  const failures: DeliveryError[] = [];
  let sent = 0;
  for (const stamp of stamps) {
    try {
      if (await post(stamp)) sent++;
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      failures.push(err);
    }
  }
  if (failures.length)
    throw new DeliveryError(
      failures.map((f) => f.message).join('; '),
      failures.some((f) => f.retryable),
    );
  return sent;
}

const RETRYABLE_STATUS = new Set([408, 429]);

export interface HttpAnswer {
  status: number;
  text: string;
}

/** One request; rejects with a DeliveryError for anything but a 2xx answer. */
export async function request(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: string,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<HttpAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError'
        ? `no answer in ${timeoutMs} ms`
        : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new DeliveryError(`${method} ${redact(url)}: ${why}`, true);
  }
  const text = await res.text().catch(() => '');
  if (res.status < 200 || res.status > 299) {
    const retryable = res.status >= 500 || RETRYABLE_STATUS.has(res.status);
    throw new DeliveryError(
      `${method} ${redact(url)}: HTTP ${res.status} ${text.slice(0, 200)}`.trim(),
      retryable,
    );
  }
  return { status: res.status, text };
}

/** A URL for a log line: without credentials or a query (either may hold a secret). */
function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(a malformed URL)';
  }
}
