// The trace each pending build request belongs to, as its `new` event said (bus.ts `tp`),
// so that the build a master runs for it continues the trace of the request that asked for
// it (a force through the API, a change hook). Bounded: a request nobody builds soon is
// forgotten, and its build simply starts a trace of its own.
import { type Context, context, propagation } from '@opentelemetry/api';

const MAX_REMEMBERED = 10_000;

export class RequestTraces {
  private readonly byRequest = new Map<number, string>();

  remember(brid: number, traceparent: string): void {
    this.byRequest.delete(brid);
    this.byRequest.set(brid, traceparent);
    if (this.byRequest.size > MAX_REMEMBERED) {
      const oldest = this.byRequest.keys().next().value as number;
      this.byRequest.delete(oldest);
    }
  }

  /** The context to start the request's build in, once (it is forgotten here). */
  take(brid: number): Context | undefined {
    const tp = this.byRequest.get(brid);
    if (tp === undefined) return undefined;
    this.byRequest.delete(brid);
    return propagation.extract(context.active(), { traceparent: tp });
  }
}
