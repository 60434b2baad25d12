// How many event connections (websockets, SSE streams) each client holds on this pod, so
// that one client cannot take every socket and subscription of the pod from the others
// (test/api/events/flood.test.ts). A client past its limit is refused before the
// connection opens.
export class ConnectionCounter {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Counts one more connection of `client`: the function that gives it back, or null when at the limit. */
  admit(client: string): (() => void) | null {
    const n = this.open.get(client) ?? 0;
    if (n >= this.max) return null;
    this.open.set(client, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(client) ?? 1) - 1;
      if (left > 0) this.open.set(client, left);
      else this.open.delete(client);
    };
  }
}
