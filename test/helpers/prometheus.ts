// Reading Prometheus text in tests.

/** The value of one sample of Prometheus text, `undefined` when absent. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',').filter(Boolean).sort();
    if (have.length === want.length && have.every((l, i) => l === want[i])) return Number(m[3]);
  }
  return undefined;
}
