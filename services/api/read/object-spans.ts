// Byte spans of moved logs' objects that this API pod fetched for line ranges, kept in memory
// (least recently used first out), so that the next read of the same lines (a build's
// failure, looked at again and again, as the raw log cache's header says) costs no GET. An
// object never changes once written (its key names the hash of its bytes: services/master/
// jobs/move-log.ts), so a kept span is never stale; a log deleted since is found gone by the
// database read that comes first. Raw downloads do not go through it: their 4 MiB spans would
// push every range out.
//
// Measured (load/results/object-store.md): without it, /contents of 100 lines from the store
// ran at about a third of PostgreSQL's rate on the loaded bench machine, each read one more
// hop to one more process.
// What an API pod keeps by default: about 500 spans of a 1,000-line chunk or two, gzipped.
const DEFAULT_BYTES = 32 * 1024 * 1024;

export class ObjectSpans {
  private readonly kept = new Map<string, Uint8Array>();
  private bytes = 0;

  /** maxBytes 0 keeps nothing: every range read fetches (the benchmark's first reads). */
  constructor(private readonly maxBytes = DEFAULT_BYTES) {}

  private static name(key: string, span: { start: number; end: number }): string {
    return `${span.start}-${span.end}:${key}`;
  }

  get(key: string, span: { start: number; end: number }): Uint8Array | undefined {
    const name = ObjectSpans.name(key, span);
    const got = this.kept.get(name);
    if (got) {
      this.kept.delete(name);
      this.kept.set(name, got);
    }
    return got;
  }

  set(key: string, span: { start: number; end: number }, bytes: Uint8Array): void {
    if (bytes.length > this.maxBytes / 8) return;
    const name = ObjectSpans.name(key, span);
    if (this.kept.has(name)) return;
    this.kept.set(name, bytes);
    this.bytes += bytes.length;
    for (const [old, b] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(old);
      this.bytes -= b.length;
    }
  }
}
