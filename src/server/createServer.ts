/**
 * The MCP server factory shared by stdio and HTTP. The tool list is built once
 * (here, not per request); each connection or request gets a light low-level
 * `Server` that answers from it.
 */
import { Server, type McpServerFactory } from '@modelcontextprotocol/server';
import type { Registry } from '../registry/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { callExposedTool } from './callTool.js';
import { buildToolCatalog, type ExposedTool } from './toolCatalog.js';
import { VERSION } from './version.js';

export interface AgentportServer {
  factory: McpServerFactory;
  tools: readonly ExposedTool[];
}

/**
 * @param registry what to list
 * @param runtime the runtime, or a function that creates it on the first call:
 *   listing tools then never pays for loading the runtime and the store.
 */
export function createAgentportServer(registry: Registry, runtime: Runtime | (() => Promise<Runtime>)): AgentportServer {
  const tools = buildToolCatalog(registry);
  let loaded: Promise<Runtime> | undefined;
  const getRuntime = () => (loaded ??= typeof runtime === 'function' ? runtime() : Promise.resolve(runtime));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listed = tools.map(({ kind: _kind, ...tool }) => tool);
  const instructions = serverInstructions(tools);

  const factory: McpServerFactory = () => {
    const server = new Server(
      { name: 'agentport', title: 'agentport', version: VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions },
    );
    server.setRequestHandler('tools/list', () => ({ tools: listed }));
    server.setRequestHandler('tools/call', (request, ctx) =>
      callExposedTool(getRuntime, byName, request.params.name, request.params.arguments, ctx),
    );
    return server;
  };
  return { factory, tools };
}

function serverInstructions(tools: readonly ExposedTool[]): string {
  if (tools.length === 0) return 'agentport serves agents as tools; this agents folder exposes none yet.';
  const names = tools.map((tool) => tool.name).join(', ');
  return (
    `agentport serves ${tools.length} agent tool${tools.length === 1 ? '' : 's'} (${names}). ` +
    'Each call runs an agent on its model and returns its answer. ' +
    'Pass the thread_id from a result back to continue that conversation.'
  );
}
