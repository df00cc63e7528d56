/**
 * The tool phase of a step: the calls of one model response run one at a
 * time in the order returned. Each result is redacted, passes the tool-call
 * hooks, and is stored before the next call runs. A call of a side's session
 * or stop tool is reported back as a signal for the stop phase.
 */
import type { HookToolCall, ThreadState, ToolResult } from '../../definitions/types.js';
import { errorMessage, hasCode, lostLock, throwIfAborted } from '../../errors.js';
import type { StoredToolCall } from '../../store/types.js';
import { TURN_RESPONSE_META } from '../agents/sideView.js';
import { withHeartbeat } from '../heartbeat.js';
import type { ControlBinding, Run, Side } from '../run/types.js';
import { threadState } from '../state/threadState.js';
import { runTool } from '../tools/dispatch.js';
import { normalizeResult } from '../tools/functionTool.js';
import { ownedBy, storeMessage } from './storeMessage.js';

/** A successful call of a session or stop tool. */
export interface ControlSignal {
  binding: ControlBinding;
  args: Record<string, unknown>;
  result: ToolResult;
}

export async function executeToolCalls(run: Run, side: Side, calls: readonly StoredToolCall[]): Promise<ControlSignal[]> {
  const signals: ControlSignal[] = [];
  for (const [index, call] of calls.entries()) {
    try {
      throwIfAborted(run.signal);
      const signal = await withHeartbeat(runToolCall(run, side, call), run.services.heartbeatMs, (seconds) =>
        run.progress(`${side.label}: still running ${call.name} (${seconds} s)`),
      );
      if (signal) signals.push(signal);
    } catch (error) {
      // Every call of a stored assistant message needs a result, or the thread cannot be continued.
      await closeUnansweredCalls(run, calls.slice(index), error);
      throw error;
    }
  }
  return signals;
}

async function runToolCall(run: Run, side: Side, call: StoredToolCall): Promise<ControlSignal | undefined> {
  const tool = side.toolset.find((t) => t.name === call.name);
  const state = threadState(run, side, tool);
  run.progress(`${side.label}: running ${call.name}`);
  const executed = await runTool(run, side, call.name, call.arguments);
  const { args, attachments } = executed;
  const hookCall: HookToolCall = { id: call.id, name: call.name, args };
  // Redacted before the hooks see it and after: a hook's replacement is output like any other.
  const result = run.redactor.deep(await afterToolHooks(side, state, hookCall, run.redactor.deep(executed.result)));

  const binding = side.controls.get(call.name);
  const turnResponse =
    binding?.role === 'stop_tool' && binding.messageProperty && typeof args[binding.messageProperty] === 'string'
      ? args[binding.messageProperty]
      : undefined;
  await storeMessage(run, side, state, {
    role: 'tool',
    content: result.status === 'success' ? (result.result ?? '') : `Error: ${result.error ?? 'the tool failed'}`,
    toolCallId: call.id,
    toolName: call.name,
    toolStatus: result.status,
    ...(attachments.length ? { attachments } : {}),
    ...(result.stack || turnResponse !== undefined
      ? {
          meta: {
            ...(result.stack ? { stack: run.redactor.text(result.stack) } : {}),
            ...(turnResponse !== undefined ? { [TURN_RESPONSE_META]: turnResponse } : {}),
          },
        }
      : {}),
  });
  run.tally.toolCalls.push({
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    status: result.status,
    ...(result.status === 'success' ? { result: result.result ?? '' } : { error: result.error ?? 'the tool failed' }),
    ...(attachments.length ? { attachments: run.redactor.deep(attachments) } : {}),
  });

  if (!binding || result.status !== 'success') return undefined;
  if (binding.role === 'session_status') {
    const status = args[binding.messageProperty];
    run.progress(`${side.label}: ${typeof status === 'string' ? status : (result.result ?? '')}`);
    return undefined;
  }
  return { binding, args, result };
}

/**
 * after_tool_call_success may replace a result; after_tool_call_failure may
 * recover from an error with a result of its own; before_store_tool_result
 * sees what will be stored. Whatever hooks return is checked like a tool's
 * own return value.
 */
async function afterToolHooks(side: Side, state: ThreadState, call: HookToolCall, result: ToolResult): Promise<ToolResult> {
  let current = result;
  if (current.status === 'success') {
    current = (await side.hooks.outcome('after_tool_call_success', state, call, current, isToolResult)) ?? current;
  } else {
    const error = new Error(current.error ?? 'the tool failed');
    if (current.stack) error.stack = current.stack;
    current = (await side.hooks.outcome('after_tool_call_failure', state, call, error, isToolResult)) ?? current;
  }
  return side.hooks.transform('before_store_tool_result', state, current, [call], isToolResult);
}

/** What a hook may return in place of a tool result: the shape a tool must return. */
function isToolResult(value: unknown): value is ToolResult {
  return normalizeResult(value) === value;
}

/** Stored directly, without hooks: this runs while the run is failing. */
async function closeUnansweredCalls(run: Run, calls: readonly StoredToolCall[], error: unknown): Promise<void> {
  // Fenced off the thread (another process may run it now): nothing more is written to it.
  if (lostLock(error, run.thread.id)) return;
  const reason = hasCode(error, 'CANCELLED')
    ? 'cancelled before this tool call finished'
    : hasCode(error, 'INTERRUPTED')
      ? 'the server stopped before this tool call finished'
      : `stopped: ${errorMessage(error)}`;
  const interrupted = hasCode(error, 'INTERRUPTED');
  for (const call of calls) {
    const message = ownedBy(run, run.execution.currentSide, {
      role: 'tool',
      content: `Error: ${reason}`,
      toolCallId: call.id,
      toolName: call.name,
      toolStatus: 'error',
      ...(interrupted ? { meta: { interrupted: true } } : {}),
    });
    await run.services.store
      .appendMessage(run.thread.id, run.redactor.deep(message))
      .then((stored) => run.messages.push(stored))
      .catch(() => {});
  }
}
