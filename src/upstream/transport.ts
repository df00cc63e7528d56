/**
 * An SDK v2 client and its transport for one upstream server: stdio (the
 * server is spawned with the config's command, args, env and cwd; its stderr
 * is handed to `onStderr`) or Streamable HTTP (the config's headers on every
 * request; the era is negotiated, so 2025-11-25 and 2026-07-28 servers both
 * work). The client package is loaded on the first connection only.
 */
import { readFileSync } from 'node:fs';
import type { Client, Transport } from '@modelcontextprotocol/client';
import type { UpstreamServerConfig } from './config.js';

const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** More pages than this from one tools/list is a server whose cursor never ends. */
const MAX_LIST_PAGES = 1000;

export interface ClientParts {
  client: Client;
  transport: Transport;
}

export async function createClient(
  config: UpstreamServerConfig,
  handlers: { onToolsChanged: () => void; onStderr: (text: string) => void },
): Promise<ClientParts> {
  const sdk = await import('@modelcontextprotocol/client');
  const client = new sdk.Client(
    { name: 'agentport', title: 'agentport', version: VERSION },
    {
      // stdio: the plain 2025 handshake, which every server answers (probing would spawn a second process).
      // HTTP: probe for 2026-07-28 and fall back to initialize.
      versionNegotiation: { mode: config.transport === 'http' ? 'auto' : 'legacy' },
      listMaxPages: MAX_LIST_PAGES,
      // Not debounced: the list is fetched again at once, and uses wait for it (see connection.ts).
      listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => handlers.onToolsChanged() } },
    },
  );
  if (config.transport === 'http') {
    const fetch = await leanFetch();
    const transport = new sdk.StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
      ...(fetch ? { fetch } : {}),
    });
    return { client, transport };
  }
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/client/stdio');
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    // The usual safe variables (PATH, HOME, ...) and the config's own: never agentport's secrets.
    env: { ...getDefaultEnvironment(), ...config.env },
    cwd: config.cwd,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => handlers.onStderr(chunk.toString()));
  return { client, transport };
}

/**
 * The fetch upstream servers are reached with: the model calls' transport (models/modelFetch.ts), which costs
 * less CPU per request than Node's fetch and leaves no listener on the session's signal (Node's fetch leaves
 * one per request until it is garbage-collected, which warns past 1,500), unless model calls are to use
 * Node's fetch (AGENTPORT_MODEL_TRANSPORT=fetch, a proxy, a replaced fetch or dispatcher): then so do these.
 */
async function leanFetch(): Promise<typeof fetch | undefined> {
  const [{ modelTransport }, { modelFetchFor }] = await Promise.all([
    import('../models/resolveModel.js'),
    import('../models/modelFetch.js'),
  ]);
  try {
    return modelFetchFor(modelTransport(process.env));
  } catch {
    // A wrong AGENTPORT_MODEL_TRANSPORT is reported by the model calls it is for.
    return undefined;
  }
}
