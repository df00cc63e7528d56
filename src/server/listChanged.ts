/**
 * `notifications/tools/list_changed` and `notifications/prompts/list_changed`
 * when a reloaded agents folder changed what is served. A stdio connection
 * is told on its own server instance (the SDK routes it onto a 2026-07-28
 * client's `subscriptions/listen` stream); an HTTP instance serves a single
 * request, so HTTP clients hear through `subscriptions/listen` streams on
 * the handler's event bus. Stateless 2025-11-25 HTTP has no stream to
 * deliver on: those clients see the change on their next `tools/list`.
 */
import type { McpRequestContext, Server, ServerEventBus } from '@modelcontextprotocol/server';

export class ListChangedNotifier {
  private readonly connections = new Set<Server>();

  constructor(private readonly bus: ServerEventBus) {}

  /** Follows a server instance while it is connected (stdio only: see above). */
  register(server: Server, context: McpRequestContext): void {
    if (context.requestInfo) return;
    this.connections.add(server);
    const previous = server.onclose;
    server.onclose = () => {
      this.connections.delete(server);
      previous?.();
    };
  }

  toolsChanged(): void {
    for (const server of this.connections) void server.sendToolListChanged().catch(notConnected);
    this.bus.publish({ kind: 'tools_list_changed' });
  }

  promptsChanged(): void {
    for (const server of this.connections) void server.sendPromptListChanged().catch(notConnected);
    this.bus.publish({ kind: 'prompts_list_changed' });
  }
}

// A probe instance the client never went on with (server/discover, then initialize) is not connected: nothing to tell.
function notConnected(): void {}
