/**
 * The runtime API the server and the CLI share. `runPrompt` runs an exposed
 * prompt or agent on a new or continued thread: it validates the input,
 * opens the run (variables, hooks, thread), runs the session to its end and
 * returns what happened. Turns of one thread run one after another.
 */
import { isUsage, totalUsage, type Usage } from '../models/usage.js';
import type { AgentDefinition, ToolResult } from '../definitions/types.js';
import { AgentportError, errorMessage, throwIfAborted } from '../errors.js';
import { logToStderr } from '../log.js';
import { ModelResolver } from '../models/resolveModel.js';
import type { Entry, LoadedPrompt, Registry } from '../registry/types.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../search/toolSearchTool.js';
import type { NewMessage, Store, ThreadRecord } from '../store/types.js';
import { watchStore, type ThreadChangeListener } from '../store/watched.js';
import {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_SESSION_TURNS,
  DEFAULT_MAX_STEPS,
  DEFAULT_TOOL_TIMEOUT_MS,
  timerDelay,
} from './limits.js';
import { runToCompletion } from './run/execute.js';
import { RunHandles } from './run/handles.js';
import { recoverInterrupted } from './run/recovery.js';
import { parseResponse } from './run/response.js';
import { prepareInput } from './run/input.js';
import { openRun } from './run/openRun.js';
import { currentCaller, ownerMeta, visibleThread } from './run/owner.js';
import type { Run, Services, Side } from './run/types.js';
import { fulfil, pendingRequest, specFor } from './subagents/envRequests.js';
import { childRecords, type NeededVariable } from './subagents/registry.js';
import { runTool } from './tools/dispatch.js';
import { buildToolset, type OfferedTool } from './tools/toolset.js';
import type { RunRequest, RunResult, RuntimeOptions } from './types.js';
import { upstreamHubFor } from '../upstream/hub.js';

export interface Runtime {
  /** The registry new runs start on (see replaceRegistry). */
  readonly registry: Registry;
  readonly store: Store;
  runPrompt(request: RunRequest): Promise<RunResult>;
  /** A subagent's pending request for variables (what is needed, never values); undefined when there is none. */
  variableRequest(threadId: string, requestId: string): Promise<VariableRequestInfo | undefined>;
  /** Stores the values of a pending request (secrets encrypted) and starts the deferred subagent. */
  provideVariables(threadId: string, requestId: string, values: Record<string, unknown>): Promise<{ reference: string | undefined }>;
  /** Runs that outlived their call (run_wait, run_status, run_cancel). */
  readonly handles: RunHandles;
  /**
   * The thread, when it exists and the caller may see it (with OAuth, only the
   * subject that created it: see run/owner.ts); undefined otherwise, alike.
   */
  visibleThread(threadId: string): Promise<ThreadRecord | undefined>;
  /**
   * Calls `listener` with a thread's id after each message appended, updated or
   * deleted through this runtime (resource subscriptions); returns the unsubscribe.
   */
  watchThreads?(listener: ThreadChangeListener): () => void;
  /** Marks threads a crashed process left `running` as interrupted; returns their ids. */
  recoverInterrupted(): Promise<string[]>;
  /** Tokens and cost of every model call a thread's runs made (kept with each step's message). */
  threadUsage(threadId: string): Promise<Usage>;
  /**
   * Runs started from now on use `registry` (a reloaded agents folder); runs
   * in progress, their subagents included, finish on the one they started
   * with. Resolves once every run of the previous registry has ended.
   */
  replaceRegistry(registry: Registry): Promise<void>;
  /**
   * Stops taking calls, interrupts every run (each records what it did and
   * which tool calls did not complete), waits up to `graceMs` for them to
   * settle, and flushes the store.
   */
  shutdown(graceMs: number): Promise<void>;
}

interface VariableRequestInfo {
  request_id: string;
  thread_id: string;
  subagent: string;
  name: string;
  variables: NeededVariable[];
}

/** The services that come from the registry: built again when it is replaced. */
type RegistryServices = 'registry' | 'models' | 'toolsetFor' | 'upstream';

export function createRuntime(options: RuntimeOptions): Runtime {
  // Every write of the runtime goes through `store`: message writes are seen by watchThreads.
  const watched = watchStore(options.store);
  const store = watched.store;
  const log = options.log ?? logToStderr;
  const env = options.env ?? process.env;
  // What stays the same when the registry is replaced: the runs, the store, the limits.
  const shared: Omit<Services, RegistryServices> = {
    store,
    env,
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    maxSessionTurns: options.maxSessionTurns ?? DEFAULT_MAX_SESSION_TURNS,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    toolTimeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolSearchThreshold: options.toolSearchThreshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD,
    retryBaseDelayMs: options.retryBaseDelayMs,
    log,
    activeRuns: new Map(),
    lostLocks: new Map(),
    startQueuedTurn: (threadId, message) => {
      oneAtATime(threadId, () => continueWith(threadId, message)).catch((error: unknown) =>
        log(`a queued message could not start a turn on thread ${threadId}: ${errorMessage(error)}`),
      );
    },
    patchThreadMeta: (threadId, patch) =>
      oneAtATimeFor(metaWrites, threadId, async () => {
        const thread = await store.getThread(threadId);
        if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread ${threadId} does not exist`);
        return store.updateThread(threadId, { meta: patch({ ...thread.meta }) });
      }),
    serialize: (threadId, work) => oneAtATime(threadId, work),
    stopping: new AbortController(),
    engine: { runToCompletion, invokeTool },
  };
  const servicesFor = (registry: Registry): Services => {
    const toolsets = new Map<string, OfferedTool[]>();
    return {
      ...shared,
      registry,
      models: new ModelResolver(registry.models, env),
      toolsetFor(prompt) {
        let toolset = toolsets.get(prompt.name);
        if (!toolset) toolsets.set(prompt.name, (toolset = buildToolset(registry, prompt.definition)));
        return toolset;
      },
      upstream: options.upstream === null ? undefined : (options.upstream ?? upstreamHubFor(registry, log)),
    };
  };
  // Runs keep the services they were opened with (run.services): replacing this one affects new runs only.
  let services = servicesFor(options.registry);
  /** Calls between taking `services` and their run being active, by the services they took. */
  const callsOn = new Map<Services, Set<Promise<unknown>>>();
  const metaWrites = new Map<string, Promise<unknown>>();
  /** Calls in progress, opening included: shutdown waits for them within its grace period. */
  const calls = new Set<Promise<unknown>>();

  const resolveTarget = (registry: Registry, target: string): { prompt: LoadedPrompt; agent: Entry<AgentDefinition> | undefined } => {
    const agent = registry.agents.get(target);
    const prompt = registry.prompts.get(agent ? agent.definition.sideA.prompt : target);
    if (!prompt) throw new AgentportError('UNKNOWN_TOOL', `no prompt or agent named "${target}"`);
    return { prompt, agent };
  };

  // Turns of one thread run one after another: in this process by a queue, across processes by the store's lock.
  const turns = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(threadId: string | undefined, run: () => Promise<T>): Promise<T> =>
    threadId ? oneAtATimeFor(turns, threadId, () => withThreadLock(shared, threadId, run)) : run();

  const runPrompt = (request: RunRequest): Promise<RunResult> => {
    const current = services;
    const call = runPromptOn(current, request);
    let pending = callsOn.get(current);
    if (!pending) callsOn.set(current, (pending = new Set()));
    keepWhilePending(pending, call);
    return call;
  };

  const runPromptOn = async (on: Services, request: RunRequest): Promise<RunResult> => {
    const { prompt, agent } = resolveTarget(on.registry, request.target);
    const input = prepareInput(prompt.definition, request.args);
    const owner = request.owner ?? currentCaller();
    const threadId = request.args.thread_id;
    const existing = threadId === undefined ? undefined : await continuedThread(store, threadId, request.target, owner);
    // Without a signal of the caller's, the run's controller is one of its own.
    const given = request.controller ?? (request.signal ? undefined : new AbortController());
    const timed = withRunTimeout(given?.signal ?? request.signal!, options.runTimeoutMs);
    const signal = timed.signal;
    const run = await openRun(on, {
      target: request.target,
      agent,
      prompt,
      args: input.args,
      userMessage: input.userMessage,
      ...(existing ? { existing } : {}),
      ...(owner !== undefined ? { threadMeta: ownerMeta(owner) } : {}),
      ...(request.variables ? { variables: request.variables } : {}),
      signal,
      // A run timeout's combined signal is not the controller's: the run then links one of its own.
      ...(given && signal === given.signal ? { controller: given } : {}),
      progress: request.onProgress ?? (() => {}),
      ...(request.elicit ? { elicit: request.elicit } : {}),
    });
    request.onThread?.(run.thread.id);
    try {
      // A new thread's first turn is queued under its id too: a call that continues it in this process waits.
      // (It takes the store's lock only if it outlives its call: see RunHandles.detach.)
      const outcome = existing ? await runToCompletion(run) : await oneAtATimeFor(turns, run.thread.id, () => runToCompletion(run));
      return resultOf(run, outcome);
    } finally {
      timed.dispose();
    }
  };

  /** A turn started by a message queued on an idle thread. */
  const continueWith = async (threadId: string, message: NewMessage): Promise<void> => {
    const thread = await store.getThread(threadId);
    if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread ${threadId} does not exist`);
    // A cancelled thread is not woken up by what arrives later (a subagent's report): it is kept, not run.
    if (thread.status === 'cancelled' || thread.meta?.terminatedAt) {
      await store.appendMessage(threadId, message);
      return;
    }
    await runToCompletion(await openOnThread(thread, [message]));
  };

  /**
   * A run over an existing thread, outside any call: for a queued message
   * (`opening`), or to act on the thread between turns (no opening, not run).
   */
  const openOnThread = (thread: ThreadRecord, opening: NewMessage[]) => {
    const { prompt, agent } = resolveTarget(services.registry, thread.prompt);
    const own = new AbortController();
    return openRun(services, {
      target: thread.prompt,
      agent,
      prompt,
      args: (thread.meta?.arguments ?? {}) as Record<string, unknown>,
      userMessage: '',
      existing: thread,
      opening,
      signal: own.signal,
      controller: own,
      progress: () => {},
    });
  };

  /** Settles once nothing started on `previous` is opening or running (subagents it spawns included). */
  const drained = async (previous: Services): Promise<void> => {
    for (;;) {
      const left = [...(callsOn.get(previous) ?? [])].concat(
        [...shared.activeRuns.values()].filter((run) => run.services === previous).map((run) => run.ended ?? Promise.resolve()),
      );
      if (left.length === 0) break;
      await Promise.allSettled(left);
    }
    callsOn.delete(previous);
  };

  return {
    get registry() {
      return services.registry;
    },
    store,
    // Run handles use only what every registry shares (store, runs, meta writes).
    handles: new RunHandles(services),
    visibleThread: (threadId) => visibleThread(store, threadId),
    watchThreads: (listener) => watched.listen(listener),
    recoverInterrupted: () => recoverInterrupted(services),
    threadUsage: async (threadId) => totalUsage((await store.listMessages(threadId)).map((m) => m.meta?.usage).filter(isUsage)),
    replaceRegistry(registry) {
      const previous = services;
      if (registry === previous.registry) return Promise.resolve();
      services = servicesFor(registry);
      return drained(previous);
    },
    async variableRequest(threadId, requestId) {
      const thread = await visibleThread(store, threadId);
      const pending = thread && pendingRequest(thread.meta, requestId);
      return (
        pending && {
          request_id: pending.id,
          thread_id: threadId,
          subagent: pending.subagent,
          name: pending.name,
          variables: pending.needed,
        }
      );
    },
    provideVariables: async (threadId, requestId, values) => {
      // Another subject's thread is not queued behind (nor locked): for this caller it is not there.
      if (currentCaller() !== undefined && !(await visibleThread(store, threadId))) throw noRequest(threadId, requestId);
      return oneAtATime(threadId, async () => {
        const thread = await visibleThread(store, threadId);
        const pending = thread && pendingRequest(thread.meta, requestId);
        if (!pending) throw noRequest(threadId, requestId);
        const parent = thread && (await openOnThread(thread, []));
        const side = parent && [parent.sides.a, parent.sides.b].find((s) => s && specFor(s, pending.subagent));
        if (!parent || !side)
          throw new AgentportError('UNKNOWN_TOOL', `the subagent ${pending.subagent} is not available on thread ${threadId} any more`);
        try {
          await fulfil(parent, side, requestId, values, { detached: true });
        } finally {
          parent.finished = true;
        }
        const started = childRecords(parent.thread.meta).find((r) => r.name === pending.name && r.agent === pending.subagent);
        return { reference: started?.reference };
      });
    },
    async shutdown(graceMs) {
      const reason = new AgentportError('INTERRUPTED', 'the server stopped before the run ended');
      shared.stopping.abort(reason);
      for (const run of shared.activeRuns.values()) run.abort(reason);
      // Calls still opening their run (or queued behind a turn) settle too: they stop at once when they start.
      const running = [...shared.activeRuns.values()].flatMap((run) => (run.ended ? [run.ended] : [])).concat([...calls]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(running), new Promise((resolve) => (timer = setTimeout(resolve, timerDelay(graceMs))))]);
      clearTimeout(timer);
      await services.upstream?.close();
      await store.close?.();
    },
    runPrompt: (request) => {
      if (shared.stopping.signal.aborted)
        return Promise.reject(new AgentportError('INTERRUPTED', 'the server is stopping: call again once it has restarted'));
      const call = runPromptQueued(request);
      keepWhilePending(calls, call);
      return call;
    },
  };
  async function runPromptQueued(request: RunRequest): Promise<RunResult> {
    const threadId = typeof request.args.thread_id === 'string' && request.args.thread_id ? request.args.thread_id : undefined;
    // Another subject's thread is refused before waiting for its turn or lock (no timing or THREAD_BUSY to probe).
    const owner = request.owner ?? currentCaller();
    if (threadId && owner !== undefined) await continuedThread(store, threadId, request.target, owner);
    return oneAtATime(threadId, () => {
      // A call cancelled while it waited for its turn stops here: nothing of it is stored.
      throwIfAborted(request.controller?.signal ?? request.signal);
      return runPrompt(request);
    });
  }
}

/** ThreadState.invokeTool: runs a tool of the side now; nothing is stored. */
async function invokeTool(run: Run, side: Side, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const executed = await runTool(run, side, name, JSON.stringify(args ?? {}));
  return run.redactor.deep(executed.result);
}

function resultOf(run: Run, outcome: Awaited<ReturnType<typeof runToCompletion>>): RunResult {
  // An answer of a declared shape is parsed; one that does not parse is the run's error.
  const schema = run.sides.a.prompt.definition.responseSchema;
  const parsed = schema && !outcome.error ? parseResponse(schema, outcome.text) : undefined;
  if (parsed && 'error' in parsed) outcome = { ...outcome, error: parsed.error };
  return {
    ...(parsed && 'data' in parsed ? { data: parsed.data } : {}),
    threadId: run.thread.id,
    prompt: run.sides.a.prompt.name,
    text: outcome.text,
    ...(outcome.reasoning ? { reasoning: outcome.reasoning } : {}),
    toolCalls: run.tally.toolCalls,
    steps: run.tally.steps,
    usage: run.tally.usage,
    turns: outcome.turns,
    ...(outcome.attachments ? { attachments: outcome.attachments } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** The thread a call continues; another owner's thread is reported like one that does not exist. */
async function continuedThread(
  store: Store,
  threadId: unknown,
  target: string,
  owner: string | undefined,
): Promise<ThreadRecord | undefined> {
  if (threadId === undefined || threadId === null || threadId === '') return undefined;
  if (typeof threadId !== 'string') throw new AgentportError('INVALID_ARGUMENTS', 'thread_id must be a string');
  const thread = await visibleThread(store, threadId, owner);
  if (!thread)
    throw new AgentportError('THREAD_NOT_FOUND', `thread_id "${threadId}" does not exist (threads are kept under the data folder)`);
  if (thread.prompt !== target) {
    throw new AgentportError('INVALID_ARGUMENTS', `thread_id "${threadId}" belongs to "${thread.prompt}", not "${target}"`);
  }
  return thread;
}

function noRequest(threadId: string, requestId: string): AgentportError {
  return new AgentportError('INVALID_ARGUMENTS', `no pending subagent request ${requestId} on thread ${threadId}`);
}

/** Keeps `call` in `pending` until it settles (waited for with Promise.allSettled, so its failure is its caller's). */
function keepWhilePending(pending: Set<Promise<unknown>>, call: Promise<unknown>): void {
  pending.add(call);
  const drop = () => void pending.delete(call);
  call.then(drop, drop);
}

/** Runs `work` after every earlier piece of work queued under the same key has settled. */
async function oneAtATimeFor<T>(queues: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const current = previous.catch(() => {}).then(work);
  queues.set(key, current);
  try {
    return await current;
  } finally {
    if (queues.get(key) === current) queues.delete(key);
  }
}

/** How long a call waits for another process's turn of the same thread before THREAD_BUSY. */
const THREAD_LOCK_WAIT_MS = 10_000;

/**
 * Runs `work` (a turn) holding the thread's store lock. A lock lost on the way (the PostgreSQL store's connection
 * dropped, the file store's lock file taken over) fences the turn: another process may run the thread from then on, so the run in progress is aborted with
 * THREAD_LOCK_LOST, and one that starts later within `work` stops at once (execute.ts reads `lostLocks`).
 */
async function withThreadLock<T>(
  services: Pick<Services, 'store' | 'activeRuns' | 'lostLocks'>,
  threadId: string,
  work: () => Promise<T>,
): Promise<T> {
  const { store, activeRuns, lostLocks } = services;
  if (!store.lockThread || !(await store.getThread(threadId))) return work();
  const release = await store.lockThread(threadId, THREAD_LOCK_WAIT_MS, (error) => {
    lostLocks.set(threadId, error);
    activeRuns.get(threadId)?.abort(error);
  });
  try {
    return await work();
  } finally {
    lostLocks.delete(threadId);
    await release();
  }
}

/** The call's signal, also aborted with RUN_TIMEOUT once the run has gone on for `timeoutMs`. */
function withRunTimeout(signal: AbortSignal, timeoutMs: number | undefined): { signal: AbortSignal; dispose: () => void } {
  if (!timeoutMs) return { signal, dispose: () => {} };
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(new AgentportError('RUN_TIMEOUT', `the run took longer than ${timeoutMs / 1000} s (--run-timeout) and was stopped`)),
    timerDelay(timeoutMs),
  );
  timer.unref();
  return { signal: AbortSignal.any([signal, controller.signal]), dispose: () => clearTimeout(timer) };
}
