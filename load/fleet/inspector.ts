// A master's V8 heap, asked over the inspector protocol (the master started with
// --inspect=127.0.0.1:PORT, only when the fleet run is given FLEET_HEAP: run.ts): its heap used
// after a full collection, and a heap snapshot written to a file. Resident memory (procstat.ts)
// measures how large the heap has grown, not what it holds: a master's RSS moved with what it
// happened to load or grow between two readings (load/results/fleet.md, 2026-11-29 07:37).
// Here, not in the master: no production endpoint forces a collection.
import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

interface Reply {
  id?: number;
  method?: string;
  params?: { chunk?: string };
  result?: unknown;
  error?: { message: string };
}

export class Inspector {
  private next = 1;
  private readonly waiting = new Map<number, { ok: (r: unknown) => void; fail: (e: Error) => void }>();
  private onChunk: ((chunk: string) => void) | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as Reply;
      if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') this.onChunk?.(msg.params!.chunk!);
      const w = msg.id === undefined ? undefined : this.waiting.get(msg.id);
      if (!w) return;
      this.waiting.delete(msg.id!);
      if (msg.error) w.fail(new Error(msg.error.message));
      else w.ok(msg.result);
    });
    ws.on('close', () => {
      for (const w of this.waiting.values()) w.fail(new Error('the inspector closed'));
      this.waiting.clear();
    });
  }

  /** The inspector of the process listening on 127.0.0.1:port (its one target). */
  static async open(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    // A snapshot's chunks come as single messages of up to about 100 MB: no payload cap.
    const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl, { maxPayload: 0 });
    await new Promise<void>((ok, fail) => {
      ws.once('open', ok);
      ws.once('error', fail);
    });
    return new Inspector(ws);
  }

  call<T>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((ok, fail) => {
      this.waiting.set(id, { ok: ok as (r: unknown) => void, fail });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * What the master holds after a full (major, compacting) collection: the V8 heap's used bytes,
   * the heap's size (what V8 has taken from the system for it), and the memory outside it that V8 accounts for (Buffers' and ArrayBuffers' backing stores:
   * a socket's buffers live there), as process.memoryUsage() reads them in the master.
   */
  async afterGc(): Promise<{ heapUsed: number; heapTotal: number; external: number }> {
    await this.call('HeapProfiler.collectGarbage');
    const { result } = await this.call<{ result: { value: string } }>('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const { heapUsed, heapTotal, external } = JSON.parse(result.value) as Record<string, number>;
    return { heapUsed: heapUsed!, heapTotal: heapTotal!, external: external! };
  }

  /** A heap snapshot (which collects garbage first) written to `path`, as DevTools saves one. */
  async snapshot(path: string): Promise<void> {
    const out = createWriteStream(path);
    this.onChunk = (chunk) => out.write(chunk);
    try {
      await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.onChunk = undefined;
      await new Promise<void>((ok, fail) => out.end((err?: Error | null) => (err ? fail(err) : ok())));
    }
  }

  close(): void {
    this.ws.close();
  }
}
