// The GET of the virtual users of load/busy/mix.ts and load/fleet/reads.ts, as k6's
// http.get counts it: every request's time, how many were made, and how many did not get
// an expected status (k6's http_req_failed and checks).

export interface TimedGet {
  /** One request: its time and status counted; the parsed body when asked for and 200. */
  get: (path: string, parse: boolean, expected?: number[]) => Promise<any>;
  durations: number[];
  counts: { requests: number; failed: number };
}

export function timedGet(base: string, headers: Record<string, string>): TimedGet {
  const durations: number[] = [];
  const counts = { requests: 0, failed: 0 };
  const get = async (path: string, parse: boolean, expected = [200]): Promise<any> => {
    const t0 = performance.now();
    let status = 0;
    let body: any;
    try {
      const res = await fetch(base + path, { headers, signal: AbortSignal.timeout(60_000) });
      status = res.status;
      if (parse && status === 200) body = await res.json();
      else await res.arrayBuffer();
    } catch {
      status = 0;
    }
    durations.push(performance.now() - t0);
    counts.requests++;
    if (!expected.includes(status)) counts.failed++;
    return body;
  };
  return { get, durations, counts };
}
