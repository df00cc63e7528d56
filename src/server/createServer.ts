/**
 * The MCP server factory shared by stdio and HTTP. The tool list is built once
 * (here, not per request); each connection or request gets a light low-level
 * `Server` that answers from it.
 */
import { type Server, type CallToolResult, type McpServerFactory, type ServerContext } from '@modelcontextprotocol/server';
import type { Registry } from '../registry/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { callExposedTool } from './callTool.js';
import { errorResult } from './toolResults.js';
import { CallCancellations } from './cancellations.js';
import { elicitation } from './elicitation.js';
import { TaskAwareServer } from './taskAwareServer.js';
import {
  TASKS_EXTENSION,
  TASK_WINDOW_MS,
  TaskCall,
  TaskInputs,
  missingTasksCapability,
  registerTaskMethods,
  tasksOptedIn,
  type CreateTaskResult,
} from './tasks.js';
import { RUN_TOOLS, callRunTool, isRunTool } from './runTools.js';
import { buildToolCatalog, type ExposedTool } from './toolCatalog.js';
import { CALL_TOOL, DEFAULT_TOOL_SEARCH_THRESHOLD, planSurface, type Surface, type ToolSearchSettings } from './toolSearchSurface.js';
import { VERSION } from './version.js';
import { exposeUpstream } from './upstreamSurface.js';
import { PromptCatalog } from './prompts.js';
import { complete } from './completions.js';
import { InstanceLogging, LogLevels } from './logging.js';
import { ThreadResources, type CallerBus } from './resources.js';
import type { ToolSearchIndex } from '../search/toolIndex.js';
import { TOOL_SEARCH_NAME, readToolSearchArgs } from '../search/toolSearchTool.js';

export interface AgentportServer {
  factory: McpServerFactory;
  tools: readonly ExposedTool[];
  surface: Surface;
  /** The runtime (created on first use), for the HTTP transport's thread endpoints. */
  runtime: () => Promise<Runtime>;
  /** Resource updates for `subscriptions/listen` streams over HTTP (2026-07-28): the HTTP handler's bus. */
  resourceBus: CallerBus;
  /** Interrupts running work and flushes the store (nothing to do when no call ever came). */
  shutdown(graceMs: number): Promise<void>;
}

export interface ServerOptions {
  toolSearch?: Partial<ToolSearchSettings>;
  /**
   * A call still running after this many milliseconds returns a handle and
   * goes on in the background (run_wait, run_status, run_cancel). 0 turns it
   * off. Default 50 s.
   */
  callBudgetMs?: number;
  /** Aggregator mode: the upstream servers' tools behind tool_search / call_tool (see upstreamSurface.ts). */
  exposeUpstream?: boolean;
}

/** Hosts give up on a tool call after about 60 s: answer before that. */
const DEFAULT_CALL_BUDGET_MS = 50_000;

/**
 * @param registry what to list
 * @param runtime the runtime, or a function that creates it on the first call:
 *   listing tools then never pays for loading the runtime and the store.
 */
export function createAgentportServer(
  registry: Registry,
  runtime: Runtime | (() => Promise<Runtime>),
  options: ServerOptions = {},
): AgentportServer {
  const tools = buildToolCatalog(registry);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const upstream = options.exposeUpstream ? exposeUpstream(registry, tools, options.toolSearch) : undefined;
  const surface =
    upstream?.surface ??
    planSurface(tools, {
      mode: options.toolSearch?.mode ?? 'auto',
      threshold: options.toolSearch?.threshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD,
    });
  let loaded: Promise<Runtime> | undefined;
  // Kept once known, so shutdown can interrupt runs at once (not a promise tick later).
  let ready: Runtime | undefined;
  const getRuntime = () =>
    (loaded ??= (typeof runtime === 'function' ? runtime() : Promise.resolve(runtime)).then((instance) => {
      resources.attach(instance);
      return (ready = instance);
    }));

  const callBudgetMs = options.callBudgetMs ?? DEFAULT_CALL_BUDGET_MS;
  // An exposed prompt or agent of the same name keeps the name.
  const runTools = callBudgetMs > 0 ? RUN_TOOLS.filter((tool) => !byName.has(tool.name)) : [];
  const listed = [...surface.listed, ...runTools];
  const cancellations = new CallCancellations();
  const taskInputs = new TaskInputs();
  const prompts = new PromptCatalog(registry, tools);
  const logLevels = new LogLevels();
  const resources = new ThreadResources(getRuntime);
  // Each server instance's logging (a stdio connection's, or one HTTP request's), found from the instance.
  const loggingOf = new WeakMap<Server, InstanceLogging>();
  const call = (
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
  ): Promise<CallToolResult | CreateTaskResult> => cancellations.track(ctx, (signal) => dispatch(name, args, ctx, server, signal));
  /** An exposed prompt or agent: as a task when the client opted in and the tool allows it. */
  const callExposed = (
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
    signal: AbortSignal,
  ) => {
    const support = byName.get(name)?.taskSupport ?? 'forbidden';
    const optedIn = support !== 'forbidden' && tasksOptedIn(server, ctx);
    if (support === 'required' && !optedIn) throw missingTasksCapability(`the tool "${name}"`);
    const task = optedIn ? new TaskCall(taskInputs, support === 'required' ? 0 : TASK_WINDOW_MS) : undefined;
    const elicit = elicitation(server, ctx);
    const log = loggingOf.get(server)?.runLog(ctx, name);
    return callExposedTool(getRuntime, byName, name, args, ctx, {
      callBudgetMs,
      signal,
      ...(elicit ? { elicit } : {}),
      ...(task ? { task } : {}),
      ...(log ? { log } : {}),
    });
  };
  const dispatch = async (
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
    signal: AbortSignal,
  ): Promise<CallToolResult | CreateTaskResult> => {
    if (isRunTool(name) && runTools.some((tool) => tool.name === name)) return callRunTool(await getRuntime(), name, args);
    const upstreamCall = upstream?.call(name, args, ctx, signal);
    if (upstreamCall) return upstreamCall;
    if (surface.index && name === TOOL_SEARCH_NAME) return searchResult(surface.index, args);
    if (surface.searchOn && name === CALL_TOOL) {
      const target = typeof args?.name === 'string' ? args.name : '';
      if (!byName.has(target)) {
        return errorResult({
          code: 'UNKNOWN_TOOL',
          message: `${CALL_TOOL}: no tool is named "${target}". Find tools with ${TOOL_SEARCH_NAME} first.`,
        });
      }
      const inner = args?.arguments;
      if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) {
        return errorResult({ code: 'INVALID_ARGUMENTS', message: `${CALL_TOOL}: arguments must be an object` });
      }
      return callExposed(target, inner as Record<string, unknown> | undefined, ctx, server, signal);
    }
    return callExposed(name, args, ctx, server, signal);
  };

  const factory: McpServerFactory = (context) => {
    const server = new TaskAwareServer(
      { name: 'agentport', title: 'agentport', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: false },
          prompts: { listChanged: false },
          resources: resources.capability(context),
          completions: {},
          logging: {},
          extensions: { [TASKS_EXTENSION]: {} },
        },
        instructions: surface.instructions,
      },
    );
    server.setRequestHandler('tools/list', () => ({ tools: listed }));
    // A task result is this extension's shape, not a CallToolResult: TaskAwareServer lets it through.
    server.setRequestHandler(
      'tools/call',
      (request, ctx) => call(request.params.name, request.params.arguments, ctx, server) as Promise<CallToolResult>,
    );
    server.setRequestHandler('prompts/list', () => ({ prompts: prompts.list() }));
    server.setRequestHandler('prompts/get', (request) => prompts.get(request.params.name, request.params.arguments));
    server.setRequestHandler('completion/complete', (request) => complete(prompts, request.params));
    resources.register(server, context);
    const logging = new InstanceLogging(context, logLevels);
    logging.register(server);
    loggingOf.set(server, logging);
    registerTaskMethods(server, taskInputs, getRuntime);
    // Over stateless HTTP the cancellation arrives at another server instance: it is routed here.
    server.setNotificationHandler('notifications/cancelled', (notification) => {
      cancellations.cancel(notification.params.requestId, notification.params.reason);
      // The SDK's own handling (its request signals) still applies to this instance's requests.
      (server as unknown as { _oncancel?: (n: typeof notification) => void })._oncancel?.(notification);
    });
    return server;
  };
  return {
    factory,
    tools,
    surface,
    runtime: getRuntime,
    resourceBus: resources.bus,
    shutdown: async (graceMs) => {
      if (ready) await ready.shutdown(graceMs);
      else if (loaded) await (await loaded).shutdown(graceMs);
      await upstream?.close();
    },
  };
}

async function searchResult(index: () => Promise<ToolSearchIndex>, raw: Record<string, unknown> | undefined): Promise<CallToolResult> {
  const args = readToolSearchArgs(raw);
  if (!args.ok) return errorResult({ code: 'INVALID_ARGUMENTS', message: args.error });
  const { searchTools } = await import('../search/engine.js');
  const { outcome, text } = searchTools(await index(), args.query, args.maxResults ? { maxResults: args.maxResults } : {});
  return {
    content: [{ type: 'text', text }],
    structuredContent: { tools: outcome.tools.map((tool) => tool.name), unknown: [...outcome.unknown] },
  };
}
