/**
 * Runs one function tool call: parse and validate the arguments (a failure is
 * an error result and `execute` is not called), run it, normalise what it
 * returned (a throw or a malformed result becomes an error result), and store
 * new attachments under /attachments/.
 */
import { describeZodIssues } from '../../definitions/issues.js';
import { AgentportError, abortError, errorMessage, isStop } from '../../errors.js';
import type { AttachmentRef, ToolAttachment, ToolResult } from '../../definitions/types.js';
import { isZodObject } from '../../definitions/zodShape.js';
import { isPlainFileName } from '../../store/paths.js';
import type { Store } from '../../store/types.js';
import type { ThreadState } from '../../definitions/types.js';
import { parseArguments } from './arguments.js';
import { freePath } from '../state/files.js';
import { timerDelay } from '../limits.js';
import type { OfferedFunctionTool } from './toolset.js';

export interface ExecutedTool {
  result: ToolResult;
  /** The validated arguments (empty when they were invalid). */
  args: Record<string, unknown>;
  /** Attachments stored or referenced, to link to the tool result message. */
  attachments: AttachmentRef[];
}

export async function executeFunctionTool(options: {
  tool: OfferedFunctionTool;
  argumentText: string;
  /** The state the tool gets, built around the call's own abort signal. */
  stateFor: (signal: AbortSignal) => ThreadState;
  /** The run's signal: cancelling the call cancels the tool. */
  signal: AbortSignal;
  /** How long the tool may run before it is abandoned. */
  timeoutMs: number;
  store: Store;
}): Promise<ExecutedTool> {
  const { tool, store } = options;
  // The tool's own signal fires on cancellation and on its timeout.
  const controller = new AbortController();
  const forward = () => controller.abort(options.signal.reason);
  if (options.signal.aborted) forward();
  else options.signal.addEventListener('abort', forward, { once: true });
  const state = options.stateFor(controller.signal);
  try {
    return await execute(tool, state, store, options.argumentText, controller, options.signal, options.timeoutMs);
  } finally {
    options.signal.removeEventListener('abort', forward);
  }
}

async function execute(
  tool: OfferedFunctionTool,
  state: ThreadState,
  store: Store,
  argumentText: string,
  controller: AbortController,
  runSignal: AbortSignal,
  timeoutMs: number,
): Promise<ExecutedTool> {
  const definition = tool.tool.definition;
  let args: Record<string, unknown> = {};
  let result: ToolResult;
  let attachments: AttachmentRef[] = [];
  let parsed: Record<string, unknown>;
  try {
    parsed = parseArguments(argumentText);
  } catch (error) {
    const message = `Invalid arguments for ${tool.name}: ${errorMessage(error)}. Call it again with valid JSON arguments.`;
    return { result: { status: 'error', error: message }, args, attachments };
  }

  if (definition.args && isZodObject(definition.args)) {
    const validated = definition.args.safeParse(parsed);
    if (validated.success) {
      args = validated.data;
      result = await run(
        () => (definition.execute as (s: unknown, a: unknown) => unknown)(state, args),
        runSignal,
        controller,
        timeoutMs,
        tool.name,
        state.threadId,
      );
    } else {
      result = {
        status: 'error',
        error: `Invalid arguments for ${tool.name}: ${describeZodIssues(validated.error.issues)}. Fix them and call the tool again.`,
      };
    }
  } else {
    args = parsed;
    result = await run(
      () => (definition.execute as (s: unknown) => unknown)(state),
      runSignal,
      controller,
      timeoutMs,
      tool.name,
      state.threadId,
    );
  }

  if (result.attachments?.length) {
    const stored = await storeAttachments(store, state.threadId, result.attachments);
    attachments = stored.refs;
    if (stored.errors.length) {
      result = { ...result, status: 'error', error: [result.error, ...stored.errors].filter(Boolean).join('; ') };
    }
  }
  return { result, args, attachments };
}

/**
 * Runs `execute`. A cancellation ends the wait even if the tool ignores its
 * abort signal; so does the timeout, which also fires the tool's signal and
 * leaves the model an error result to read.
 */
async function run(
  execute: () => unknown,
  runSignal: AbortSignal,
  controller: AbortController,
  timeoutMs: number,
  name: string,
  threadId: string,
): Promise<ToolResult> {
  let onAbort: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const cancelled = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(runSignal));
    if (runSignal.aborted) onAbort();
    else runSignal.addEventListener('abort', onAbort, { once: true });
  });
  const timedOut = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new AgentportError('CANCELLED', `${name} timed out`));
      resolve({
        status: 'error',
        error: `${name} did not finish within ${formatSeconds(timeoutMs)}: it was stopped. Try again with a smaller task, or go on without it.`,
      });
    }, timerDelay(timeoutMs));
    timer.unref?.();
  });
  try {
    return await Promise.race([Promise.resolve().then(execute).then(normalizeResult), cancelled, timedOut]);
  } catch (error) {
    if (isStop(error, threadId)) throw error;
    return {
      status: 'error',
      error: error instanceof Error ? error.message : String(error),
      ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
    };
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener('abort', onAbort!);
    cancelled.catch(() => {});
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** A tool must return `{ status: 'success' | 'error', ... }`; anything else is reported as an error. */
export function normalizeResult(value: unknown): ToolResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { status: 'error', error: `the tool returned ${describe(value)} instead of a result object ({ status, result?, error? })` };
  }
  const record = value as Record<string, unknown>;
  if (record.status !== 'success' && record.status !== 'error') {
    return {
      status: 'error',
      error: `the tool returned a result whose status is ${describe(record.status)} (expected "success" or "error")`,
    };
  }
  for (const key of ['result', 'error', 'stack'] as const) {
    if (record[key] !== undefined && typeof record[key] !== 'string') {
      return { status: 'error', error: `the tool returned a result whose ${key} is ${describe(record[key])} (expected a string)` };
    }
  }
  if (record.attachments !== undefined && !Array.isArray(record.attachments)) {
    return { status: 'error', error: 'the tool returned attachments that are not an array' };
  }
  return record as unknown as ToolResult;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? JSON.stringify(value) : `a ${typeof value}`;
}

/**
 * New attachments (with `data`) are written under /attachments/, unchanged;
 * refs must exist. Each malformed item is reported (and skipped) on its own,
 * so one bad entry never costs the run or the other files.
 */
export async function storeAttachments(
  store: Store,
  threadId: string,
  items: readonly unknown[],
): Promise<{ refs: AttachmentRef[]; errors: string[] }> {
  const refs: AttachmentRef[] = [];
  const errors: string[] = [];
  for (const [index, item] of items.entries()) {
    const problem = attachmentProblem(item);
    if (problem) {
      errors.push(`attachment ${index + 1} refused: ${problem}`);
      continue;
    }
    const entry = item as Partial<ToolAttachment & AttachmentRef>;
    try {
      if (typeof entry.data === 'string') {
        const path = await freePath(store, threadId, `/attachments/${entry.name!}`);
        refs.push(
          await store.writeFile(threadId, path, Buffer.from(entry.data, 'base64'), {
            mimeType: entry.mimeType!,
            name: path.slice(path.lastIndexOf('/') + 1),
            ...(entry.width !== undefined ? { width: entry.width } : {}),
            ...(entry.height !== undefined ? { height: entry.height } : {}),
          }),
        );
      } else {
        const existing = await store.readFile(threadId, entry.path!);
        if (existing) refs.push(existing.ref);
        else errors.push(`attachment ${entry.path!} does not exist in this thread`);
      }
    } catch (error) {
      errors.push(`attachment ${index + 1} refused: ${errorMessage(error)}`);
    }
  }
  return { refs, errors };
}

/** Why an item cannot be an attachment, or undefined when it can. */
function attachmentProblem(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return `it is ${describe(item)}, not an object`;
  const entry = item as Record<string, unknown>;
  if ('data' in entry) {
    if (typeof entry.data !== 'string') return 'data must be a base64 string';
    if (typeof entry.mimeType !== 'string' || !entry.mimeType) return 'mimeType must be a non-empty string';
    const name = entry.name;
    if (typeof name !== 'string' || !isPlainFileName(name)) {
      return `name must be a file name (not empty, ".", ".." or a path), got ${describe(name)}`;
    }
    return undefined;
  }
  if (typeof entry.path === 'string' && entry.path) return undefined;
  return 'an attachment needs either data (a new file, with name and mimeType) or the path of an existing file';
}
