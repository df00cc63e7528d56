/**
 * Cancellation of tool calls across server instances. Over stateless
 * Streamable HTTP each request gets its own server instance, so the
 * `notifications/cancelled` for a call reaches one that never saw it. Calls
 * in flight are kept here by request id, for every instance of one server
 * (stdio calls are not: one instance serves the connection, see
 * `connectionFactory` in createServer.ts);
 * a cancellation aborts the call with that id. Ids are chosen by clients and
 * may repeat across clients: when several calls in flight share the id, none
 * is aborted rather than the wrong one. With OAuth, a cancellation reaches
 * only calls of the same subject (run/owner.ts).
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import { log } from '../log.js';
import { currentCaller } from '../runtime/run/owner.js';

type RequestId = string | number;

/** A request id within its caller's own calls. */
const keyOf = (id: RequestId): string => JSON.stringify([currentCaller() ?? null, id]);

export class CallCancellations {
  private readonly inFlight = new Map<string, Set<AbortController>>();

  /** Runs a call with a signal that aborts on its request's own signal or on a routed cancellation. */
  async track<T>(ctx: ServerContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const id = keyOf(ctx.mcpReq.id);
    const controller = new AbortController();
    const forward = () => controller.abort(ctx.mcpReq.signal.reason);
    if (ctx.mcpReq.signal.aborted) forward();
    else ctx.mcpReq.signal.addEventListener('abort', forward, { once: true });
    let calls = this.inFlight.get(id);
    if (!calls) this.inFlight.set(id, (calls = new Set()));
    calls.add(controller);
    try {
      return await work(controller.signal);
    } finally {
      ctx.mcpReq.signal.removeEventListener('abort', forward);
      calls.delete(controller);
      if (calls.size === 0) this.inFlight.delete(id);
    }
  }

  cancel(id: RequestId | undefined, reason: unknown): void {
    if (id === undefined) return;
    const calls = this.inFlight.get(keyOf(id));
    if (!calls || calls.size === 0) return;
    if (calls.size > 1) {
      log.warn(
        `a cancellation for request ${String(id)} matches ${calls.size} calls in flight (from different clients): none was cancelled`,
      );
      return;
    }
    for (const controller of calls) controller.abort(reason);
  }
}
