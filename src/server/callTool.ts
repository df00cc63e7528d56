/**
 * The one place where runtime outcomes become MCP results: an unknown tool is
 * a protocol error (-32602); everything else, bad arguments and failing
 * models included, is a tool result with `isError: true` the caller can read.
 * Results carry the thread id (structuredContent and _meta) so the caller can
 * continue the conversation.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { AgentportError, errorInfo, errorMessage, isAgentportError } from '../errors.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Elicit } from '../runtime/run/types.js';
import { timerDelay } from '../runtime/limits.js';
import { log } from '../log.js';
import type { ExposedTool } from './toolCatalog.js';
import { THREAD_META_KEY, errorResult, runResult } from './toolResults.js';
import { createTaskResult, type CreateTaskResult, type TaskCall } from './tasks.js';
import type { RunLog } from './logging.js';
import { withInlineMedia } from './resources.js';

/** `_meta` key under which a caller may pass values for declared variables. */
const VARIABLES_META_KEY = 'agentport/variables';

/**
 * Pause between the last progress notification and the result: current SDK
 * clients drop a progress notification that arrives right before the result.
 */
const PROGRESS_SETTLE_MS = 20;

export interface CallOptions {
  /** How to ask the person behind the call for values (elicitation), when they can be asked. */
  elicit?: Elicit;
  /** Answer with a run handle after this long (0: wait for the end). */
  callBudgetMs?: number;
  /** The call's abort signal (the request's, unless the server tracks cancellation itself). */
  signal?: AbortSignal;
  /** Set when the client opted in to MCP tasks and the tool allows them. */
  task?: TaskCall;
  /** Run events as MCP log messages, when the client wants them. */
  log?: RunLog;
}

export async function callExposedTool(
  getRuntime: () => Promise<Runtime>,
  tools: ReadonlyMap<string, ExposedTool>,
  name: string,
  args: Record<string, unknown> | undefined,
  ctx: ServerContext,
  options: CallOptions = {},
): Promise<CallToolResult | CreateTaskResult> {
  if (!tools.has(name)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  const { task, callBudgetMs = 0, signal = ctx.mcpReq.signal, log: runLog } = options;
  const elicit = task?.elicit ?? options.elicit;
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let progress = 0;
  let lastProgress = 0;
  const onProgress = (message: string) => {
    // Log messages follow the call while it waits for its run, like progress (never a run it handed off).
    runLog?.send('info', message);
    if (progressToken === undefined) return;
    progress += 1;
    lastProgress = Date.now();
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken, progress, message } })
      .catch((error: unknown) => log.warn(`progress notification failed: ${errorMessage(error)}`));
  };
  const settle = async () => {
    const wait = lastProgress + PROGRESS_SETTLE_MS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
  // The run has a signal of its own: linked to the call until the call stops waiting for it.
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  // Known up front when continuing a thread: a call waiting for the thread's earlier run gets a handle too.
  let threadId: string | undefined = typeof args?.thread_id === 'string' && args.thread_id ? args.thread_id : undefined;
  let threadKnown!: () => void;
  const threadOpened = new Promise<void>((resolve) => (threadKnown = resolve));
  let background: ((message: string) => void) | undefined;
  let latest: string | undefined;
  try {
    const variables = callVariables(ctx.mcpReq._meta?.[VARIABLES_META_KEY]);
    const runtime = await getRuntime();
    const done = runtime.runPrompt({
      target: name,
      args: args ?? {},
      controller,
      onProgress: (message) => {
        latest = message;
        if (background) background(message);
        else onProgress(message);
      },
      onThread: (id) => {
        threadId = id;
        if (runLog) runLog.threadId = id;
        threadKnown();
      },
      ...(variables ? { variables } : {}),
      ...(elicit ? { elicit } : {}),
    });
    if (task) {
      // A task needs its thread: a run still opening is waited for.
      const becomesTask =
        (await task.becomesTask(done)) &&
        (await Promise.race([
          threadOpened.then(() => true),
          done.then(
            () => false,
            () => false,
          ),
        ]));
      if (becomesTask && threadId) {
        signal.removeEventListener('abort', forward);
        const detached = await runtime.handles.detach(threadId, done, () => controller.abort(), { withId: true });
        background = detached.progress;
        if (latest) background(latest);
        task.created(detached.id!, done);
        return createTaskResult((await runtime.handles.get(detached.id!))!);
      }
      task.answeredInline();
    } else if (callBudgetMs > 0 && (await outlives(done, callBudgetMs)) && threadId) {
      // The host stops waiting here; the run goes on, reached through run_wait.
      signal.removeEventListener('abort', forward);
      background = (await runtime.handles.detach(threadId, done, () => controller.abort())).progress;
      if (latest) background(latest);
      await settle();
      return handleResult(threadId, callBudgetMs);
    }
    const result = await done;
    runLog?.ended(result);
    await settle();
    return await withInlineMedia(runResult(result), result, runtime.store);
  } catch (error) {
    if (!isAgentportError(error)) log.error(`tool ${name} failed: ${errorMessage(error)}`);
    const info = errorInfo(error);
    runLog?.failed(info);
    await settle();
    return errorResult(info);
  }
}

/** Whether `done` is still pending after `ms` (it keeps going either way). */
function outlives(done: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), timerDelay(ms));
    const finished = () => {
      clearTimeout(timer);
      resolve(false);
    };
    done.then(finished, finished);
  });
}

/** What a call returns at the call budget: not an error, and one plain instruction. */
function handleResult(threadId: string, budgetMs: number): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text: `This is taking longer than ${seconds(budgetMs)}, so it goes on in the background (thread_id ${threadId}). Call run_wait with this thread_id to get the result.`,
      },
    ],
    structuredContent: { thread_id: threadId, status: 'running' },
    _meta: { [THREAD_META_KEY]: threadId },
  };
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** The values of `_meta["agentport/variables"]`: an object of strings, or the call fails naming what is wrong. */
function callVariables(raw: unknown): Record<string, string> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      `_meta["${VARIABLES_META_KEY}"] must be an object of variable names and string values, e.g. {"API_KEY": "..."}`,
    );
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') {
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `_meta["${VARIABLES_META_KEY}"]: the value of variable ${key} must be a string, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
        { fields: [key] },
      );
    }
    out[key] = value;
  }
  return out;
}
