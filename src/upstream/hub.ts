/**
 * Every upstream server of one agents folder, for the whole process: one
 * connection (one SDK client) per server, shared by all runs, the MCP
 * surface and the CLI; connected lazily; closed on shutdown. It names the
 * tools (`<server>__<tool>`, see names.ts), tells listeners when a server's
 * list changes, and redacts the servers' secrets from everything it returns.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { AgentportError, errorMessage } from '../errors.js';
import { log as defaultLog } from '../log.js';
import type { Registry } from '../registry/types.js';
import type { UpstreamConfig } from './config.js';
import { UpstreamConnection, type CallOptions, type ConnectionState } from './connection.js';
import { hubs } from './hubs.js';
import { namespaceTools } from './names.js';
import type { UpstreamSecrets } from './secrets.js';

/** An upstream tool as agentport offers it. */
export interface UpstreamTool {
  /** The name models and hosts see: `<server>__<tool>`. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server asks for it to be offered at once (`_meta["anthropic/alwaysLoad"]`). */
  alwaysLoad: boolean;
  /** The definition as the server sent it (redacted). */
  definition: Tool;
}

export interface UpstreamServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: ConnectionState;
  tools?: number;
  error?: string;
  protocolVersion?: string;
}

export type ToolsChanged = (server: string, tools: readonly UpstreamTool[], previous: readonly UpstreamTool[]) => void;

const ALWAYS_LOAD_META = 'anthropic/alwaysLoad';

export class UpstreamHub {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly lists = new Map<string, UpstreamTool[]>();
  private readonly byName = new Map<string, UpstreamTool>();
  private readonly listeners = new Set<ToolsChanged>();
  private readonly log: (line: string) => void;

  constructor(
    readonly config: UpstreamConfig,
    private readonly options: { reserved?: ReadonlySet<string>; log?: (line: string) => void } = {},
  ) {
    this.log = options.log ?? defaultLog.info;
    for (const server of config.servers.values()) {
      this.connections.set(
        server.name,
        new UpstreamConnection(server, {
          secrets: config.secrets,
          log: (line) => this.log(config.secrets.text(line)),
          onToolsChanged: (tools) => this.named(server.name, tools),
        }),
      );
    }
  }

  get secrets(): UpstreamSecrets {
    return this.config.secrets;
  }

  serverNames(): string[] {
    return [...this.connections.keys()];
  }

  has(server: string): boolean {
    return this.connections.has(server);
  }

  /**
   * The server's tools, connecting and listing on first use. Throws UPSTREAM_UNAVAILABLE.
   * @param options.wait false: a server in its backoff after failures fails at once
   */
  async tools(server: string, signal?: AbortSignal, options: { wait?: boolean } = {}): Promise<readonly UpstreamTool[]> {
    await this.connection(server).listTools(signal, options.wait ?? true);
    return this.lists.get(server) ?? [];
  }

  /** The tools listed so far, without connecting. */
  cachedTools(server: string): readonly UpstreamTool[] | undefined {
    return this.lists.get(server);
  }

  /** Changes each time the server's list changes (0 before the first list). */
  generation(server: string): number {
    return this.connections.get(server)?.generation ?? 0;
  }

  /** A tool by its namespaced name, among the lists fetched so far. */
  lookup(name: string): UpstreamTool | undefined {
    return this.byName.get(name);
  }

  /** Lists every server (or those named) at once; failures are reported, not thrown. */
  async settle(
    servers: readonly string[] = this.serverNames(),
    signal?: AbortSignal,
    options: { wait?: boolean } = {},
  ): Promise<{ tools: UpstreamTool[]; failures: Array<{ server: string; error: string }> }> {
    const outcomes = await Promise.allSettled(servers.map((server) => this.tools(server, signal, options)));
    const tools: UpstreamTool[] = [];
    const failures: Array<{ server: string; error: string }> = [];
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') tools.push(...outcome.value);
      else failures.push({ server: servers[i]!, error: this.secrets.text(errorMessage(outcome.reason)) });
    });
    return { tools, failures };
  }

  /**
   * Calls an upstream tool. An `isError` result is returned as it is; every
   * other failure throws UPSTREAM_FAILED or UPSTREAM_UNAVAILABLE (or the
   * signal's abort error). The result is redacted.
   */
  async call(tool: UpstreamTool, args: Record<string, unknown>, options: Omit<CallOptions, 'definition'> = {}): Promise<CallToolResult> {
    const result = await this.connection(tool.server).call(tool.tool, args, { ...options, definition: tool.definition });
    return this.secrets.deep(result);
  }

  onChange(listener: ToolsChanged): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): UpstreamServerStatus[] {
    return [...this.connections.values()].map((connection) => {
      const tools = connection.cachedTools;
      return {
        name: connection.name,
        transport: connection.config.transport,
        state: connection.state,
        ...(tools ? { tools: tools.length } : {}),
        ...(connection.lastError ? { error: connection.lastError } : {}),
        ...(connection.protocolVersion ? { protocolVersion: connection.protocolVersion } : {}),
      };
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private connection(server: string): UpstreamConnection {
    const connection = this.connections.get(server);
    if (!connection)
      throw new AgentportError('UPSTREAM_UNAVAILABLE', `no upstream server named "${server}" in ${this.config.file}`, { server });
    return connection;
  }

  /** Names a server's (new) list and tells the listeners. */
  private named(server: string, raw: readonly Tool[]): void {
    const previous = this.lists.get(server) ?? [];
    const reserved = this.options.reserved;
    const names = namespaceTools(
      server,
      raw.map((tool) => tool.name),
      (name) => reserved?.has(name) === true,
    );
    const seen = new Set<string>();
    const tools: UpstreamTool[] = [];
    for (const definition of raw) {
      // A server that lists a name twice: the first one counts.
      if (seen.has(definition.name)) continue;
      seen.add(definition.name);
      const safe = this.secrets.deep(definition);
      tools.push({
        name: names.get(definition.name)!,
        server,
        tool: definition.name,
        description: safe.description ?? safe.title ?? '',
        inputSchema: safe.inputSchema ?? { type: 'object', properties: {} },
        alwaysLoad: definition._meta?.[ALWAYS_LOAD_META] === true,
        definition: safe,
      });
    }
    for (const tool of previous) this.byName.delete(tool.name);
    for (const tool of tools) this.byName.set(tool.name, tool);
    this.lists.set(server, tools);
    if (previous.length || tools.length)
      this.log(`upstream server ${server}: ${tools.length} tool(s)${previous.length ? ' (the list changed)' : ''}`);
    for (const listener of this.listeners) {
      try {
        listener(server, tools, previous);
      } catch (error) {
        this.log(`an upstream tools listener failed: ${errorMessage(error)}`);
      }
    }
  }
}

/**
 * The hub of a loaded agents folder (one per registry, so one per process
 * in `serve`): the runtime, the MCP surface and the CLI share it. Undefined
 * when the folder declares no upstream servers.
 */
export function upstreamHubFor(
  registry: Pick<Registry, 'upstream' | 'tools' | 'prompts' | 'agents'>,
  log?: (line: string) => void,
): UpstreamHub | undefined {
  if (!registry.upstream || registry.upstream.servers.size === 0) return undefined;
  let hub = hubs.get(registry);
  if (!hub) {
    const reserved = new Set([...registry.tools.keys(), ...registry.prompts.keys(), ...registry.agents.keys()]);
    hub = new UpstreamHub(registry.upstream, { reserved, ...(log ? { log } : {}) });
    hubs.set(registry, hub);
  }
  return hub;
}
