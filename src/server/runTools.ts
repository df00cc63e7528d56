/**
 * run_wait, run_status and run_cancel: how a host reaches a run that
 * outlived its call (see src/runtime/run/handles.ts). Listed whenever the
 * call budget is on, and never deferred behind tool search.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { JSON_SCHEMA_2020_12 } from '../definitions/jsonSchema.js';
import { quoteKeys, undeclaredKeys } from '../definitions/unknownKeys.js';
import { errorInfo, hasCode } from '../errors.js';
import type { RunView } from '../runtime/run/handles.js';
import type { Runtime } from '../runtime/runtime.js';
import { errorResult, runResult } from './toolResults.js';

const RUN_TOOL_NAMES = ['run_wait', 'run_status', 'run_cancel'] as const;
type RunToolName = (typeof RUN_TOOL_NAMES)[number];

const THREAD_ID = { type: 'string', description: 'The thread_id of the run (from the result that said it goes on in the background).' };
const annotations = (title: string, readOnly: boolean) => ({
  title,
  readOnlyHint: readOnly,
  destructiveHint: false,
  idempotentHint: readOnly,
  openWorldHint: false,
});

const RUN_SCHEMA = {
  $schema: JSON_SCHEMA_2020_12,
  type: 'object' as const,
  properties: { thread_id: THREAD_ID },
  required: ['thread_id'],
  additionalProperties: false,
};

export const RUN_TOOLS: Tool[] = [
  {
    name: 'run_wait',
    title: 'Wait for a run',
    description:
      'Wait for a run that is still going on in the background (up to timeout_s seconds, at most 50), then get its result, or its latest progress if it is still running. Call it again until the run ends.',
    inputSchema: {
      $schema: JSON_SCHEMA_2020_12,
      type: 'object' as const,
      properties: {
        thread_id: THREAD_ID,
        timeout_s: { type: 'number', minimum: 0, maximum: 50, description: 'Seconds to wait (default 50).' },
      },
      required: ['thread_id'],
      additionalProperties: false,
    },
    annotations: annotations('Wait for a run', true),
  },
  {
    name: 'run_status',
    title: 'Status of a run',
    description: 'Say whether a background run is still going on, with its latest progress, without waiting.',
    inputSchema: RUN_SCHEMA,
    annotations: annotations('Status of a run', true),
  },
  {
    name: 'run_cancel',
    title: 'Cancel a run',
    description: 'Stop a run that is going on in the background.',
    inputSchema: RUN_SCHEMA,
    annotations: annotations('Cancel a run', false),
  },
];

export function isRunTool(name: string): name is RunToolName {
  return (RUN_TOOL_NAMES as readonly string[]).includes(name);
}

export async function callRunTool(runtime: Runtime, name: RunToolName, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
  const threadId = args?.thread_id;
  if (typeof threadId !== 'string' || !threadId)
    return errorResult({ code: 'INVALID_ARGUMENTS', message: `${name}: thread_id must be the thread_id of a run` });
  const extra = undeclaredKeys(args, name === 'run_wait' ? ['thread_id', 'timeout_s'] : ['thread_id']);
  if (extra.length > 0) return errorResult({ code: 'INVALID_ARGUMENTS', message: `${name}: no argument ${quoteKeys(extra)} is declared` });
  const timeout = args?.timeout_s;
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout >= 0)))
    return errorResult({ code: 'INVALID_ARGUMENTS', message: `${name}: timeout_s must be a number of seconds` });
  try {
    const view =
      name === 'run_wait'
        ? await runtime.handles.wait(threadId, (timeout ?? 50) * 1000)
        : name === 'run_status'
          ? await runtime.handles.status(threadId)
          : await runtime.handles.cancel(threadId);
    const result = withRunsAfter(viewResult(view), runtime.handles.pendingAfter(threadId, view), threadId);
    if (name !== 'run_status') return result;
    // The thread's tokens and cost so far, all its runs together.
    const usage = await runtime.threadUsage(threadId);
    return { ...result, structuredContent: { ...(result.structuredContent ?? {}), thread_usage: usage } };
  } catch (error) {
    // A thread with no run in the background: its status is that it waits for its next turn.
    if (name === 'run_status' && hasCode(error, 'INVALID_ARGUMENTS')) {
      return {
        content: [{ type: 'text', text: `No run of thread ${threadId} is going on in the background: it waits for its next turn.` }],
        structuredContent: { thread_id: threadId, status: 'idle', thread_usage: await runtime.threadUsage(threadId) },
      };
    }
    return errorResult(errorInfo(error));
  }
}

/** A result of a thread with later turns still in the background says so: run_wait gives each in turn. */
function withRunsAfter(result: CallToolResult, later: number, threadId: string): CallToolResult {
  if (later === 0) return result;
  const note = `This thread has ${later === 1 ? 'a later turn' : `${later} later turns`} in the background: call run_wait again with thread_id ${threadId} for ${later === 1 ? 'its' : 'the next'} result.`;
  return {
    ...result,
    content: [...result.content, { type: 'text', text: note }],
    structuredContent: { ...(result.structuredContent ?? {}), later_runs: later },
  };
}

/** A handle's state as a tool result: the run's own result once it ended. */
function viewResult(view: RunView): CallToolResult {
  if (view.result) return runResult(view.result);
  if (view.status === 'running') {
    return {
      content: [
        {
          type: 'text',
          text: `Still running${view.progress ? ` (latest: ${view.progress})` : ''}. Call run_wait again with thread_id ${view.threadId} to wait for the result.`,
        },
      ],
      structuredContent: {
        thread_id: view.threadId,
        status: 'running',
        ...(view.progress ? { progress: view.progress } : {}),
        ...(view.startedAt ? { started_at: view.startedAt } : {}),
      },
    };
  }
  const error = view.error ?? { code: 'INTERNAL' as const, message: `the run ended as ${view.status}` };
  return { ...errorResult(error), structuredContent: { thread_id: view.threadId, status: view.status, error } };
}
