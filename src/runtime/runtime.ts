/**
 * The runtime API the server and the CLI share. `runPrompt` runs an exposed
 * prompt or agent on a new or continued thread: it validates the input,
 * opens the run (variables, hooks, thread), runs the session to its end and
 * returns what happened. Turns of one thread run one after another.
 */
import type { AgentDefinition, ToolResult } from '../definitions/types.js';
import { AgentportError, errorMessage } from '../errors.js';
import { logToStderr } from '../log.js';
import { ModelResolver } from '../models/resolveModel.js';
import type { Entry, LoadedPrompt, Registry } from '../registry/types.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../search/toolSearchTool.js';
import type { NewMessage, Store, ThreadRecord } from '../store/types.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_SESSION_TURNS, DEFAULT_MAX_STEPS } from './limits.js';
import { runToCompletion } from './run/execute.js';
import { prepareInput } from './run/input.js';
import { openRun } from './run/openRun.js';
import type { Run, Services, Side } from './run/types.js';
import { threadState } from './state/threadState.js';
import { runTool } from './tools/dispatch.js';
import { buildToolset, type OfferedTool } from './tools/toolset.js';
import type { RunRequest, RunResult, RuntimeOptions } from './types.js';

export interface Runtime {
  readonly registry: Registry;
  readonly store: Store;
  runPrompt(request: RunRequest): Promise<RunResult>;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { registry, store } = options;
  const log = options.log ?? logToStderr;
  const toolsets = new Map<string, OfferedTool[]>();
  const services: Services = {
    registry,
    store,
    models: new ModelResolver(registry.models, options.env ?? process.env),
    env: options.env ?? process.env,
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    maxSessionTurns: options.maxSessionTurns ?? DEFAULT_MAX_SESSION_TURNS,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    toolSearchThreshold: options.toolSearchThreshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD,
    retryBaseDelayMs: options.retryBaseDelayMs,
    log,
    toolsetFor(prompt) {
      let toolset = toolsets.get(prompt.name);
      if (!toolset) toolsets.set(prompt.name, (toolset = buildToolset(registry, prompt.definition)));
      return toolset;
    },
    activeRuns: new Map(),
    startQueuedTurn: (threadId, message) => {
      oneAtATime(threadId, () => continueWith(threadId, message)).catch((error: unknown) =>
        log(`a queued message could not start a turn on thread ${threadId}: ${errorMessage(error)}`),
      );
    },
    engine: { runToCompletion, invokeTool },
  };

  const resolveTarget = (target: string): { prompt: LoadedPrompt; agent: Entry<AgentDefinition> | undefined } => {
    const agent = registry.agents.get(target);
    const prompt = registry.prompts.get(agent ? agent.definition.sideA.prompt : target);
    if (!prompt) throw new AgentportError('UNKNOWN_TOOL', `no prompt or agent named "${target}"`);
    return { prompt, agent };
  };

  const turns = new Map<string, Promise<unknown>>();
  const oneAtATime = async <T>(threadId: string | undefined, run: () => Promise<T>): Promise<T> => {
    if (!threadId) return run();
    const previous = turns.get(threadId) ?? Promise.resolve();
    const current = previous.catch(() => {}).then(run);
    turns.set(threadId, current);
    try {
      return await current;
    } finally {
      if (turns.get(threadId) === current) turns.delete(threadId);
    }
  };

  const runPrompt = async (request: RunRequest): Promise<RunResult> => {
    const { prompt, agent } = resolveTarget(request.target);
    const input = prepareInput(prompt.definition, request.args);
    const existing = await continuedThread(store, request.args.thread_id, request.target);
    const run = await openRun(services, {
      target: request.target,
      agent,
      prompt,
      args: input.args,
      userMessage: input.userMessage,
      ...(existing ? { existing } : {}),
      ...(request.variables ? { variables: request.variables } : {}),
      signal: request.signal ?? new AbortController().signal,
      progress: request.onProgress ?? (() => {}),
    });
    return resultOf(run, await runToCompletion(run));
  };

  /** A turn started by a message queued on an idle thread. */
  const continueWith = async (threadId: string, message: NewMessage): Promise<void> => {
    const thread = await store.getThread(threadId);
    if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread ${threadId} does not exist`);
    const { prompt, agent } = resolveTarget(thread.prompt);
    const args = (thread.meta?.arguments ?? {}) as Record<string, unknown>;
    const run = await openRun(services, {
      target: thread.prompt,
      agent,
      prompt,
      args,
      userMessage: '',
      existing: thread,
      opening: [message],
      signal: new AbortController().signal,
      progress: () => {},
    });
    await runToCompletion(run);
  };

  return {
    registry,
    store,
    runPrompt: (request) => {
      const threadId = typeof request.args.thread_id === 'string' && request.args.thread_id ? request.args.thread_id : undefined;
      return oneAtATime(threadId, () => runPrompt(request));
    },
  };
}

/** ThreadState.invokeTool: runs a tool of the side now; nothing is stored. */
async function invokeTool(run: Run, side: Side, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = side.toolset.find((t) => t.name === name);
  const executed = await runTool(run, side, name, JSON.stringify(args ?? {}), threadState(run, side, tool));
  return run.redactor.deep(executed.result);
}

function resultOf(run: Run, outcome: Awaited<ReturnType<typeof runToCompletion>>): RunResult {
  return {
    threadId: run.thread.id,
    prompt: run.sides.a.prompt.name,
    text: outcome.text,
    ...(outcome.reasoning ? { reasoning: outcome.reasoning } : {}),
    toolCalls: run.tally.toolCalls,
    steps: run.tally.steps,
    turns: outcome.turns,
    ...(outcome.attachments ? { attachments: outcome.attachments } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

async function continuedThread(store: Store, threadId: unknown, target: string): Promise<ThreadRecord | undefined> {
  if (threadId === undefined || threadId === null || threadId === '') return undefined;
  if (typeof threadId !== 'string') throw new AgentportError('INVALID_ARGUMENTS', 'thread_id must be a string');
  const thread = await store.getThread(threadId).catch(() => undefined);
  if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread_id "${threadId}" does not exist (threads are kept under the data folder)`);
  if (thread.prompt !== target) {
    throw new AgentportError('INVALID_ARGUMENTS', `thread_id "${threadId}" belongs to "${thread.prompt}", not "${target}"`);
  }
  return thread;
}
