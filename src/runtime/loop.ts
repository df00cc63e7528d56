/**
 * The step loop, the single engine every run uses (top-level calls and
 * sub-prompts alike). Each step assembles the context, calls the model, stores
 * the assistant message, then executes its tool calls one at a time in the
 * order returned, storing each result before the next step.
 */
import type { ModelRequest, ModelRequestMessage, ModelResponse, ToolResult } from '../definitions/types.js';
import { AgentportError, errorMessage, isAgentportError } from '../errors.js';
import { callModel } from '../models/callModel.js';
import { modelRequestBase } from '../models/resolveModel.js';
import type { NewMessage, StoredMessage, StoredToolCall } from '../store/types.js';
import { DEFAULT_RECENT_IMAGE_THRESHOLD, resolveImages, selectHistory } from './context.js';
import { executeFunctionTool, parseArguments } from './executeTool.js';
import type { RunFrame } from './frame.js';
import { withHeartbeat } from './heartbeat.js';
import { reasoningRequestFields } from './reasoning.js';
import { runSubprompt } from './subprompt.js';
import { createThreadState, type RuntimeThreadState } from './threadState.js';
import { DeferredTools } from './deferredTools.js';
import { TOOL_SEARCH_NAME } from '../search/toolSearchTool.js';
import { toFunctionDefinitions, type OfferedTool } from './toolset.js';
import type { ToolCallRecord } from './types.js';
import { toWireMessages } from './wire.js';

/** How often a model that ignores toolChoice "required" is asked again. */
const REQUIRED_TOOL_RETRIES = 2;

export interface LoopOutcome {
  status: 'completed' | 'max_steps' | 'failed';
  text: string | null;
  reasoning?: string;
  toolCalls: ToolCallRecord[];
  errors: string[];
  steps: number;
}

export async function runLoop(frame: RunFrame): Promise<LoopOutcome> {
  const { services, prompt } = frame;
  const def = prompt.definition;
  const toolset = def.toolChoice === 'none' ? [] : frame.toolset;
  const deferred = new DeferredTools(toolset, services.toolSearchThreshold, loadedToolsOf(frame));
  const maxSteps = frame.agent?.definition.sideA.maxSteps ?? services.maxSteps;
  const outcome: LoopOutcome = { status: 'completed', text: null, toolCalls: [], errors: [], steps: 0 };
  let calledTool = false;
  let requiredRetries = 0;

  for (;;) {
    if (outcome.steps >= maxSteps) {
      outcome.status = 'max_steps';
      outcome.errors.push(`stopped after ${maxSteps} steps without a final answer`);
      return outcome;
    }
    throwIfAborted(frame.signal);
    outcome.steps += 1;
    const state = stateFor(frame, outcome.steps);
    frame.progress(`${prompt.name}: step ${outcome.steps}, calling the model`);

    const requireTool = def.toolChoice === 'required' && !calledTool && toolset.length > 0;
    const messages = await assembleMessages(frame, state, requireTool && requiredRetries > 0);
    let response: ModelResponse;
    try {
      ({ response } = await withHeartbeat(
        callModel(services.models, def.model, (model) => buildRequest(frame, model, messages, deferred, requireTool), {
          signal: frame.signal,
          ...(services.retryBaseDelayMs !== undefined ? { retryBaseDelayMs: services.retryBaseDelayMs } : {}),
          onRetry: (message) => frame.progress(`${prompt.name}: ${message}`),
        }),
        services.heartbeatMs,
        (seconds) => frame.progress(`${prompt.name}: step ${outcome.steps}, still waiting for the model (${seconds} s)`),
      ));
    } catch (error) {
      if (isAgentportError(error) && error.code === 'CANCELLED') throw error;
      outcome.status = 'failed';
      outcome.errors.push(frame.redactor.text(errorMessage(error)));
      return outcome;
    }

    if (requireTool && response.toolCalls.length === 0) {
      if (requiredRetries < REQUIRED_TOOL_RETRIES) {
        requiredRetries += 1;
        frame.progress(`${prompt.name}: the model answered without calling a tool; asking again (toolChoice "required")`);
        continue;
      }
      outcome.status = 'failed';
      outcome.errors.push(`the model answered without calling a tool ${REQUIRED_TOOL_RETRIES + 1} times although toolChoice is "required"`);
      return outcome;
    }

    const toolCalls: StoredToolCall[] = response.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
    await storeMessage(frame, state, {
      role: 'assistant',
      content: response.text,
      ...(toolCalls.length ? { toolCalls } : {}),
      ...(response.reasoning && def.reasoning?.include ? { reasoning: response.reasoning } : {}),
    });

    if (toolCalls.length === 0) {
      outcome.text = frame.redactor.text(response.text ?? '');
      if (response.reasoning && !def.reasoning?.exclude) outcome.reasoning = frame.redactor.text(response.reasoning);
      return outcome;
    }
    calledTool = true;
    for (const [index, call] of toolCalls.entries()) {
      try {
        throwIfAborted(frame.signal);
        outcome.toolCalls.push(
          await withHeartbeat(runToolCall(frame, toolset, deferred, call, outcome.steps), services.heartbeatMs, (seconds) =>
            frame.progress(`${prompt.name}: still running ${call.name} (${seconds} s)`),
          ),
        );
      } catch (error) {
        // Every call of a stored assistant message needs a result, or the thread cannot be continued.
        await closeUnansweredCalls(frame, toolCalls.slice(index), error);
        throw error;
      }
    }
  }
}

async function assembleMessages(frame: RunFrame, state: RuntimeThreadState, insistOnTool: boolean): Promise<ModelRequestMessage[]> {
  const { store } = frame.services;
  const def = frame.prompt.definition;
  const all = frame.messages;
  const earlier = [...frame.parentChat, ...all.filter((m) => m.seq < frame.turnStartSeq)];
  const current = all.filter((m) => m.seq >= frame.turnStartSeq);
  let history = selectHistory(def, earlier, current);
  history = await frame.hooks.transform('filter_messages', state, history);
  const threshold = def.recentImageThreshold ?? DEFAULT_RECENT_IMAGE_THRESHOLD;
  history = await resolveImages(store, frame.thread.id, history, threshold);
  let messages: ModelRequestMessage[] = [
    ...frame.preamble,
    ...toWireMessages(history, { recentImageThreshold: threshold, includeReasoning: def.reasoning?.include === true }),
  ];
  if (insistOnTool) messages.push({ role: 'user', content: 'Answer by calling one of the available tools.' });
  messages = await frame.hooks.transform('prefilter_llm_history', state, messages);
  return frame.redactor.deep(messages);
}

function buildRequest(
  frame: RunFrame,
  model: Parameters<typeof modelRequestBase>[0],
  messages: ModelRequestMessage[],
  deferred: DeferredTools,
  requireTool: boolean,
): ModelRequest {
  const def = frame.prompt.definition;
  const request: ModelRequest = { ...modelRequestBase(model), messages, ...reasoningRequestFields(def.reasoning, model) };
  const tools = [...toFunctionDefinitions(deferred.visible()), ...(deferred.active ? [deferred.searchDefinition()] : [])];
  if (tools.length > 0) {
    request.tools = tools;
    request.tool_choice = requireTool ? 'required' : 'auto';
    request.parallel_tool_calls = def.parallelToolCalls ?? false;
  }
  return request;
}

async function runToolCall(
  frame: RunFrame,
  toolset: readonly OfferedTool[],
  deferred: DeferredTools,
  call: StoredToolCall,
  step: number,
): Promise<ToolCallRecord> {
  const tool = toolset.find((t) => t.name === call.name);
  frame.progress(`${frame.prompt.name}: running ${call.name}`);
  const state = stateFor(frame, step, tool?.kind === 'function' ? tool : undefined);
  let result: ToolResult;
  let args: Record<string, unknown> = {};
  let attachments: StoredMessage['attachments'] = [];
  if (!tool && deferred.active && call.name === TOOL_SEARCH_NAME) {
    const searched = await deferred.search(call.arguments);
    result = searched.ok ? { status: 'success', result: searched.text } : { status: 'error', error: searched.text };
    if (searched.found.length) await rememberLoadedTools(frame, deferred);
  } else if (!tool) {
    result = { status: 'error', error: `There is no tool named "${call.name}". Available tools: ${toolset.map((t) => t.name).join(', ') || 'none'}.` };
  } else if (tool.kind === 'function') {
    ({ result, args, attachments } = await executeFunctionTool({ tool, argumentText: call.arguments, state, store: frame.services.store }));
  } else {
    const parsed = parseArguments(call.arguments);
    if (parsed.ok) args = parsed.value;
    result = await runSubprompt(frame, tool, call.arguments, { runLoop, storeMessage });
  }
  // Every tool result, whatever produced it, is redacted and passes the tool-result hooks.
  result = frame.redactor.deep(result);
  result = (await frame.hooks.transform('before_store_tool_result', state, { tool: call.name, args, result })).result;
  await frame.hooks.notify(result.status === 'success' ? 'after_tool_call_success' : 'after_tool_call_failure', state, { tool: call.name, args, result });
  const content = result.status === 'success' ? result.result ?? '' : `Error: ${result.error ?? 'the tool failed'}`;
  await storeMessage(frame, state, {
    role: 'tool',
    content,
    toolCallId: call.id,
    toolName: call.name,
    toolStatus: result.status,
    ...(attachments?.length ? { attachments } : {}),
    ...(result.stack ? { meta: { stack: frame.redactor.text(result.stack) } } : {}),
  });
  return {
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    status: result.status,
    ...(result.status === 'success' ? { result: result.result ?? '' } : { error: result.error ?? 'the tool failed' }),
  };
}

async function closeUnansweredCalls(frame: RunFrame, calls: readonly StoredToolCall[], error: unknown): Promise<void> {
  const reason = isAgentportError(error) && error.code === 'CANCELLED' ? 'cancelled before this tool call finished' : `stopped: ${errorMessage(error)}`;
  for (const call of calls) {
    await frame.services.store
      .appendMessage(frame.thread.id, frame.redactor.deep({ role: 'tool', content: `Error: ${reason}`, toolCallId: call.id, toolName: call.name, toolStatus: 'error' }))
      .then((stored) => frame.messages.push(stored))
      .catch(() => {});
  }
}

const LOADED_TOOLS_META = 'loadedTools';

function loadedToolsOf(frame: RunFrame): string[] {
  const value = frame.thread.meta?.[LOADED_TOOLS_META];
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

/** Tools a search loaded stay loaded for the thread's later turns. */
async function rememberLoadedTools(frame: RunFrame, deferred: DeferredTools): Promise<void> {
  const meta = { ...frame.thread.meta, [LOADED_TOOLS_META]: [...deferred.loaded] };
  frame.thread = await frame.services.store.updateThread(frame.thread.id, { meta });
}

function stateFor(frame: RunFrame, step: number, tool?: OfferedTool): RuntimeThreadState {
  const tenvs = tool?.kind === 'function' && tool.tool.definition.tenvs ? Object.keys(tool.tool.definition.tenvs.shape) : [];
  return createThreadState({
    store: frame.services.store,
    threadId: frame.thread.id,
    prompt: frame.prompt.name,
    scope: frame.scope,
    ...(tool ? { tool: tool.name } : {}),
    tenvNames: tenvs,
    execution: { stepCount: step, currentSide: 'a', abortSignal: frame.signal },
  });
}

/** Every message goes through here: hooks, secret redaction, then the store. */
export async function storeMessage(frame: RunFrame, state: RuntimeThreadState, message: NewMessage): Promise<StoredMessage> {
  const prepared = await frame.hooks.transform('before_create_message', state, message);
  const stored = await frame.services.store.appendMessage(frame.thread.id, frame.redactor.deep(prepared));
  frame.messages.push(stored);
  await frame.hooks.notify('after_create_message', state, stored);
  return stored;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AgentportError('CANCELLED', 'the call was cancelled');
}
