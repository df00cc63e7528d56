/**
 * The runtime API the server and the CLI share. `runPrompt` runs an exposed
 * prompt or agent as a thread: it validates the input, resolves variables
 * (a missing required one fails the call before anything runs), creates or
 * continues the thread, runs the step loop and records the outcome.
 */
import type { AgentDefinition } from '../definitions/types.js';
import { AgentportError, isAgentportError } from '../errors.js';
import { ModelResolver } from '../models/resolveModel.js';
import type { Entry, LoadedPrompt, Registry } from '../registry/types.js';
import type { Store, ThreadRecord, VariableValue } from '../store/types.js';
import { HookRunner } from './hooks.js';
import { prepareInput } from './input.js';
import { runLoop, storeMessage } from './loop.js';
import type { Services } from './frame.js';
import { Redactor } from './secrets.js';
import { createThreadState } from './threadState.js';
import { buildToolset, toolsetForTurn, type OfferedTool } from './toolset.js';
import { openTurn } from './turn.js';
import { recordStatus } from './threadStatus.js';
import type { RunRequest, RunResult, RuntimeOptions } from './types.js';
import { VariableScope, declarationsFor, declaredFromEnvironment, toolEnvDefaults } from './variables.js';
import type { RunFrame } from './frame.js';
import { logToStderr } from '../log.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS } from './limits.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../search/toolSearchTool.js';


export interface Runtime {
  readonly registry: Registry;
  readonly store: Store;
  runPrompt(request: RunRequest): Promise<RunResult>;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { registry, store } = options;
  const env = options.env ?? process.env;
  const log = options.log ?? logToStderr;
  const toolsets = new Map<string, OfferedTool[]>();
  const services: Services = {
    registry,
    store,
    models: new ModelResolver(registry.models, env),
    env,
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    toolSearchThreshold: options.toolSearchThreshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD,
    retryBaseDelayMs: options.retryBaseDelayMs,
    log,
    toolsetFor(prompt) {
      let toolset = toolsets.get(prompt.name);
      if (!toolset) toolsets.set(prompt.name, (toolset = buildToolset(registry, prompt.definition)));
      return toolset;
    },
  };

  const resolveTarget = (target: string): { prompt: LoadedPrompt; agent: Entry<AgentDefinition> | undefined } => {
    const agent = registry.agents.get(target);
    const prompt = registry.prompts.get(agent ? agent.definition.sideA.prompt : target);
    if (!prompt) throw new AgentportError('UNKNOWN_TOOL', `no prompt or agent named "${target}"`);
    return { prompt, agent };
  };

  // Turns of one thread run one after another: two calls continuing the same
  // thread at once would interleave their messages.
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

  const runTurn = async (request: RunRequest): Promise<RunResult> => {
    const { prompt, agent } = resolveTarget(request.target);
    const input = prepareInput(prompt.definition, request.args);
    const signal = request.signal ?? new AbortController().signal;
    const progress = request.onProgress ?? (() => {});

    const existing = await continuedThread(store, request.args.thread_id, request.target);
    const opened = await openTurn(prompt, input.args, input.userMessage);
    const toolset = toolsetForTurn(services, prompt, opened.extraTools);
    const declared = declarationsFor(prompt, agent, toolset);
    const stored = existing ? await store.getVariables(existing.id) : [];
    const scope = new VariableScope(declared, {
      defaults: prompt.definition.env,
      toolDefaults: toolEnvDefaults(toolset),
      layers: [
        agent?.definition.env,
        declaredFromEnvironment(declared, env),
        Object.fromEntries(stored.map((v) => [v.name, v.value])),
        request.variables,
      ],
    });
    const missing = scope.missing();
    if (missing.length) {
      throw new AgentportError(
        'MISSING_VARIABLES',
        `cannot run "${request.target}": missing required variables: ${missing
          .map((d) => `${d.name} (${d.declaredBy}${d.description ? `: ${d.description}` : ''})`)
          .join(', ')}. Set them in the server's environment or pass them with the call.`,
        { missing: missing.map((d) => d.name) },
      );
    }
    const redactor = new Redactor();
    for (const secret of scope.secretValues()) redactor.add(secret);
    const hooks = new HookRunner(
      HookRunner.select(registry.hooks, prompt.definition.hooks, agent?.definition.hooks),
      (line) => log(redactor.text(line)),
    );

    const thread = existing ?? (await store.createThread({ prompt: request.target }));
    const state = createThreadState({ store, threadId: thread.id, prompt: prompt.name, scope, execution: { stepCount: 0, currentSide: 'a', abortSignal: signal } });
    if (!existing) await hooks.notify('after_thread_created', state, thread);
    if (request.variables) await store.setVariables(thread.id, valuesToStore(request.variables, scope));

    const frame: RunFrame = {
      services,
      thread,
      prompt,
      agent,
      scope,
      redactor,
      hooks,
      signal,
      progress: (message: string) => progress(redactor.text(message)),
      ancestry: [prompt.name],
      turnStartSeq: 0,
      messages: existing ? await store.listMessages(thread.id) : [],
      parentChat: [],
      preamble: opened.preamble,
      toolset,
    };
    try {
      for (const [index, message] of opened.turn.entries()) {
        const storedMessage = await storeMessage(frame, state, message);
        if (index === 0) frame.turnStartSeq = storedMessage.seq;
      }
      const outcome = await runLoop(frame);
      await recordStatus(store, frame.thread, outcome.status === 'completed' ? 'idle' : 'failed');
      return {
        threadId: thread.id,
        prompt: prompt.name,
        text: outcome.text ?? '',
        ...(outcome.reasoning ? { reasoning: outcome.reasoning } : {}),
        toolCalls: outcome.toolCalls,
        steps: outcome.steps,
        ...(outcome.status === 'completed' ? {} : { error: outcome.errors.join('; ') }),
      };
    } catch (error) {
      const cancelled = isAgentportError(error) && error.code === 'CANCELLED';
      await store.updateThread(thread.id, {
        status: cancelled ? 'cancelled' : 'failed',
        // frame.thread, not thread: the run may have updated its meta (tools loaded by search).
        meta: { ...frame.thread.meta, ...(cancelled ? { cancelledAt: new Date().toISOString() } : {}) },
      });
      throw redactor.error(error);
    }
  };

  return {
    registry,
    store,
    runPrompt: (request) => {
      const threadId = typeof request.args.thread_id === 'string' && request.args.thread_id ? request.args.thread_id : undefined;
      return oneAtATime(threadId, () => runTurn(request));
    },
  };
}

async function continuedThread(store: Store, threadId: unknown, target: string): Promise<ThreadRecord | undefined> {
  if (threadId === undefined || threadId === null || threadId === '') return undefined;
  if (typeof threadId !== 'string') throw new AgentportError('INVALID_ARGUMENTS', 'thread_id must be a string');
  const thread = await store.getThread(threadId).catch(() => undefined);
  if (!thread) throw new AgentportError('INVALID_ARGUMENTS', `thread_id "${threadId}" does not exist (threads are kept under the data folder)`);
  if (thread.prompt !== target) {
    throw new AgentportError('INVALID_ARGUMENTS', `thread_id "${threadId}" belongs to "${thread.prompt}", not "${target}"`);
  }
  return thread;
}

function valuesToStore(values: Record<string, string>, scope: VariableScope): VariableValue[] {
  return Object.entries(values).map(([name, value]) => ({ name, value, secret: scope.isSecret(name), scoped: scope.isScoped(name) }));
}
