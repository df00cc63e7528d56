/**
 * The MCP server factory shared by stdio and HTTP. The tool list is built once
 * (here, not per request); each connection or request gets a light low-level
 * `Server` that answers from it. `replaceRegistry` swaps in a reloaded agents
 * folder (`serve --watch`): new requests are answered from it at once.
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
import { callRunTool, isRunTool } from './runTools.js';
import type { ExposedTool } from './toolCatalog.js';
import { CALL_TOOL, type SavedSearchIndex, type Surface, type ToolSearchSettings } from './toolSearchSurface.js';
import { VERSION } from './version.js';
import { complete } from './completions.js';
import { ListChangedNotifier } from './listChanged.js';
import { compareSurfaces, deriveSurface, type RegistrySurface, type SurfaceChange } from './registrySurface.js';
import type { ExposeUpstream } from './upstreamSurface.js';
import type { UpstreamHub } from '../upstream/hub.js';
import { handOverUpstreamHub } from '../upstream/hubs.js';
import { errorMessage } from '../errors.js';
import { quoteKeys, undeclaredKeys } from '../definitions/unknownKeys.js';
import { log } from '../log.js';
import { InstanceLogging, LogLevels } from './logging.js';
import { ThreadResources, type CallerBus } from './resources.js';
import type { ToolSearchIndex } from '../search/toolIndex.js';
import { TOOL_SEARCH_NAME, readToolSearchArgs } from '../search/toolSearchTool.js';

export interface AgentportServer {
  /** Server instances for HTTP, one per request: a cancellation may reach another instance, and is routed. */
  factory: McpServerFactory;
  /**
   * Server instances for a transport where one instance serves a whole connection (stdio): a cancellation
   * reaches the instance running the call, whose own request signal the SDK aborts; nothing is routed.
   */
  connectionFactory: McpServerFactory;
  /** What is served now (each replaced by replaceRegistry). */
  readonly registry: Registry;
  readonly tools: readonly ExposedTool[];
  readonly surface: Surface;
  /** The runtime (created on first use), for the HTTP transport's thread endpoints. */
  runtime: () => Promise<Runtime>;
  /** Resource updates for `subscriptions/listen` streams over HTTP (2026-07-28): the HTTP handler's bus. */
  resourceBus: CallerBus;
  /**
   * Serves `registry` from now on: tools, tool search, prompts and
   * completions, and the runtime's new runs. Runs in progress finish on the
   * registry they started with; upstream connections the new registry does
   * not keep are closed once those runs have ended. Clients are sent
   * list_changed for tools and prompts when their lists changed (with
   * `listChanged`). Throws, serving the previous registry still, when the
   * new one cannot be served.
   */
  replaceRegistry(registry: Registry): SurfaceChange;
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
  /**
   * Aggregator mode: the upstream servers' tools behind tool_search / call_tool. upstreamSurface.ts's
   * exposeUpstream, loaded by the caller that asks for this mode (a server without it never loads the module).
   */
  exposeUpstream?: ExposeUpstream;
  /** The registry may be replaced while serving (serve --watch): tools and prompts declare `listChanged`. */
  listChanged?: boolean;
  /** The tool catalogue when it is already built (the start-up cache); by default it is built from the registry. */
  tools?: ExposedTool[];
  /** Where the search index of `tools` is kept between starts (the start-up cache). */
  savedSearchIndex?: SavedSearchIndex;
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
  const callBudgetMs = options.callBudgetMs ?? DEFAULT_CALL_BUDGET_MS;
  const derive = (next: Registry) =>
    deriveSurface(next, { toolSearch: options.toolSearch, exposeUpstream: options.exposeUpstream, callBudgetMs });
  let current = deriveSurface(
    registry,
    { toolSearch: options.toolSearch, exposeUpstream: options.exposeUpstream, callBudgetMs, savedSearchIndex: options.savedSearchIndex },
    options.tools,
  );
  /** Calls in progress, by the surface they started on: a replaced surface's upstream hub outlives them. */
  const inProgress = new Map<RegistrySurface, Set<Promise<unknown>>>();
  /** Upstream hubs of replaced registries, closed once their runs and calls have ended (or at shutdown). */
  const retiring = new Set<UpstreamHub>();
  let loaded: Promise<Runtime> | undefined;
  // Kept once known, so shutdown can interrupt runs at once (not a promise tick later).
  let ready: Runtime | undefined;
  // A lazily loaded registry gets its module loader ready before anything reads a definition.
  const getRuntime = () =>
    (loaded ??= Promise.resolve(current.registry.lazy?.prepare())
      .then(() => (typeof runtime === 'function' ? runtime() : runtime))
      .then((instance) => {
        resources.attach(instance);
        // Created for the registry served at start: a reload may have come first.
        if (instance.registry !== current.registry) void instance.replaceRegistry(current.registry);
        return (ready = instance);
      }));

  const cancellations = new CallCancellations();
  const taskInputs = new TaskInputs();
  const logLevels = new LogLevels();
  const resources = new ThreadResources(getRuntime);
  const notifier = new ListChangedNotifier(resources.bus);
  const listChanged = options.listChanged === true;
  // Each server instance's logging (a stdio connection's, or one HTTP request's), found from the instance.
  const loggingOf = new WeakMap<Server, InstanceLogging>();
  const call = (
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
    routed: boolean,
  ): Promise<CallToolResult | CreateTaskResult> => {
    const state = current;
    const work = (signal: AbortSignal) => dispatch(state, name, args, ctx, server, signal);
    const result = routed ? cancellations.track(ctx, work) : work(ctx.mcpReq.signal);
    let calls = inProgress.get(state);
    if (!calls) inProgress.set(state, (calls = new Set()));
    // Kept until it settles (retire waits with allSettled: a failure is the caller's).
    calls.add(result);
    const drop = () => void calls.delete(result);
    result.then(drop, drop);
    return result;
  };
  /** An exposed prompt or agent: as a task when the client opted in and the tool allows it. */
  const callExposed = (
    state: RegistrySurface,
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
    signal: AbortSignal,
  ) => {
    const support = state.byName.get(name)?.taskSupport ?? 'forbidden';
    const optedIn = support !== 'forbidden' && tasksOptedIn(server, ctx);
    if (support === 'required' && !optedIn) throw missingTasksCapability(`the tool "${name}"`);
    const task = optedIn ? new TaskCall(taskInputs, support === 'required' ? 0 : TASK_WINDOW_MS) : undefined;
    const elicit = elicitation(server, ctx);
    const runLog = loggingOf.get(server)?.runLog(ctx, name);
    // With a lazily loaded registry, the tool's definitions are imported first; a file that no longer loads is the call's error.
    const lazy = state.registry.lazy;
    const prepared = lazy ? () => lazy.prepare([name]).then(getRuntime) : getRuntime;
    return callExposedTool(prepared, state.byName, name, args, ctx, {
      callBudgetMs,
      signal,
      ...(elicit ? { elicit } : {}),
      ...(task ? { task } : {}),
      ...(runLog ? { log: runLog } : {}),
    });
  };
  const dispatch = async (
    state: RegistrySurface,
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    server: Server,
    signal: AbortSignal,
  ): Promise<CallToolResult | CreateTaskResult> => {
    const { surface, upstream, byName } = state;
    if (isRunTool(name) && state.runTools.some((tool) => tool.name === name)) return callRunTool(await getRuntime(), name, args);
    const upstreamCall = upstream?.call(name, args, ctx, signal);
    if (upstreamCall) return upstreamCall;
    if (surface.index && name === TOOL_SEARCH_NAME) return searchResult(surface.index, args);
    if (surface.searchOn && name === CALL_TOOL) {
      if (typeof args?.name !== 'string' || !args.name) {
        return errorResult({
          code: 'INVALID_ARGUMENTS',
          message: `${CALL_TOOL}: name must be the name of a tool (from ${TOOL_SEARCH_NAME})`,
        });
      }
      const extra = undeclaredKeys(args, ['name', 'arguments']);
      if (extra.length > 0) {
        return errorResult({
          code: 'INVALID_ARGUMENTS',
          message: `${CALL_TOOL}: no argument ${quoteKeys(extra)} is declared (only name and arguments)`,
        });
      }
      const target = args.name;
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
      return callExposed(state, target, inner as Record<string, unknown> | undefined, ctx, server, signal);
    }
    return callExposed(state, name, args, ctx, server, signal);
  };

  /** Once nothing started on `previous` is left, its upstream surface stops and a hub the new registry did not keep closes. */
  const retire = (previous: RegistrySurface, runsEnded: Promise<void>, hub: UpstreamHub | undefined) => {
    if (hub) retiring.add(hub);
    void Promise.allSettled([runsEnded, ...(inProgress.get(previous) ?? [])]).then(async () => {
      inProgress.delete(previous);
      previous.upstream?.dispose();
      if (!hub || !retiring.delete(hub)) return;
      await hub
        .close()
        .catch((error: unknown) => log.warn(`closing the upstream servers of the previous agents folder: ${errorMessage(error)}`));
    });
  };

  const factoryFor =
    (routed: boolean): McpServerFactory =>
    (context) => {
      const server = new TaskAwareServer(
        { name: 'agentport', title: 'agentport', version: VERSION },
        {
          capabilities: {
            tools: { listChanged },
            prompts: { listChanged },
            resources: resources.capability(context),
            completions: {},
            logging: {},
            extensions: { [TASKS_EXTENSION]: {} },
          },
          instructions: current.surface.instructions,
        },
      );
      // Each request reads the surface being served when it arrives.
      server.setRequestHandler('tools/list', () => ({ tools: current.listed }));
      // A task result is this extension's shape, not a CallToolResult: TaskAwareServer lets it through.
      server.setRequestHandler(
        'tools/call',
        (request, ctx) => call(request.params.name, request.params.arguments, ctx, server, routed) as Promise<CallToolResult>,
      );
      server.setRequestHandler('prompts/list', () => ({ prompts: current.prompts.list() }));
      server.setRequestHandler('prompts/get', (request) => current.prompts.get(request.params.name, request.params.arguments));
      server.setRequestHandler('completion/complete', (request) => complete(current.prompts, request.params));
      resources.register(server, context);
      if (listChanged) notifier.register(server, context);
      const logging = new InstanceLogging(context, logLevels);
      logging.register(server);
      loggingOf.set(server, logging);
      registerTaskMethods(server, taskInputs, getRuntime);
      // Over stateless HTTP the cancellation arrives at another server instance: it is routed here.
      server.setNotificationHandler('notifications/cancelled', (notification) => {
        // A connection's own calls are not routed: another transport's call with the same id is not this client's.
        if (routed) cancellations.cancel(notification.params.requestId, notification.params.reason);
        // The SDK's own handling (its request signals) still applies to this instance's requests.
        (server as unknown as { _oncancel?: (n: typeof notification) => void })._oncancel?.(notification);
      });
      return server;
    };
  return {
    factory: factoryFor(true),
    connectionFactory: factoryFor(false),
    get registry() {
      return current.registry;
    },
    get tools() {
      return current.tools;
    },
    get surface() {
      return current.surface;
    },
    runtime: getRuntime,
    resourceBus: resources.bus,
    replaceRegistry(next) {
      const previous = current;
      // Before the new surface is derived: with unchanged upstream servers, it finds the open hub.
      const hub = handOverUpstreamHub(previous.registry, next);
      current = derive(next);
      const change = compareSurfaces(previous, current);
      retire(previous, ready ? ready.replaceRegistry(next) : Promise.resolve(), hub);
      if (listChanged && change.toolsListChanged) notifier.toolsChanged();
      if (listChanged && change.promptsListChanged) notifier.promptsChanged();
      return change;
    },
    shutdown: async (graceMs) => {
      if (ready) await ready.shutdown(graceMs);
      else if (loaded) await (await loaded).shutdown(graceMs);
      await current.upstream?.close();
      await Promise.all([...retiring].map((hub) => hub.close().catch(() => {})));
      retiring.clear();
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
