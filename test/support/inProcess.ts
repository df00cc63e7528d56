/**
 * agentport in the test process, served over real Streamable HTTP and called
 * by the real MCP client: the runtime's options (store, step limit, retry
 * delays, heartbeat) stay under the test's control.
 */
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import type { RuntimeOptions } from '../../src/runtime/types.js';
import { createAgentportServer, type AgentportServer, type ServerOptions } from '../../src/server/createServer.js';
import { startHttp } from '../../src/server/http.js';
import { MemoryStore } from '../../src/store/memoryStore.js';
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp, type Era } from './mcpClients.js';

export interface InProcessAgentport {
  url: string;
  runtime: Runtime;
  /** The server whose `factory` the HTTP endpoint serves (its `connectionFactory` serves connections, as stdio does). */
  server: AgentportServer;
  logs: string[];
  connect(era?: Era): Promise<Client>;
  close(): Promise<void>;
}

export async function startInProcess(options: {
  agentsDir: string;
  env: Record<string, string>;
  runtime?: Partial<Omit<RuntimeOptions, 'registry'>>;
  server?: ServerOptions;
}): Promise<InProcessAgentport> {
  const registry = await loadRegistryOrThrow({ agentsDir: options.agentsDir });
  const logs: string[] = [];
  const runtime = createRuntime({
    registry,
    store: new MemoryStore(),
    env: options.env,
    retryBaseDelayMs: 1,
    log: (line) => logs.push(line),
    ...options.runtime,
  });
  const server = createAgentportServer(registry, runtime, options.server);
  const http = await startHttp(server, { port: 0 });
  const clients: Client[] = [];
  return {
    url: http.url,
    runtime,
    server,
    logs,
    async connect(era = 'modern') {
      const client = await connectHttp(era, http.url);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await http.close();
    },
  };
}

/** The text of a tools/call result. */
export function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
}
