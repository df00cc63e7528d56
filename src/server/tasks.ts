/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over
 * agentport's runs. A client opts in through its capabilities (for its
 * session, or for one request in the request's `_meta`); the server then
 * decides per call: a run that ends within a short window is answered
 * inline, one that goes on (or asks the person for input) becomes a task,
 * reached with `tasks/get`, `tasks/update` and `tasks/cancel`. A task is a
 * detached run with an id (see src/runtime/run/handles.ts), so its record
 * and outcome are stored with the thread like a run handle's.
 *
 * Outcomes: a run that ended, even as an error it reports (step limit,
 * sessionFail, bad arguments), is a `completed` task whose result may have
 * `isError`; a run that could not run (the model unreachable after retries,
 * an internal failure, a server that stopped) is a `failed` task with a
 * JSON-RPC error; a cancelled run is `cancelled`.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentportErrorCode, ErrorInfo } from '../errors.js';
import type { RunView } from '../runtime/run/handles.js';
import { RUN_RECORD_TTL_MS } from '../runtime/limits.js';
import type { Elicit } from '../runtime/run/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { errorResult, runResult } from './toolResults.js';
import { formRequest, formValues } from './elicitation.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** A run that ends within this window is answered inline, not as a task. */
export const TASK_WINDOW_MS = 1000;
const POLL_INTERVAL_MS = 1000;
/** JSON-RPC "Missing Required Client Capability" (SEP-2575). */
const MISSING_CAPABILITY = -32021;
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

/** Run errors that mean the run could not run at all: a failed task rather than a tool error. */
const RUN_FAILURES: ReadonlySet<AgentportErrorCode> = new Set(['MODEL_FAILED', 'MODEL_CONFIG', 'INTERNAL', 'INTERRUPTED', 'CORRUPT_DATA']);

interface PendingQuestion {
  request: InputRequest;
  answer: (response: unknown) => void;
}

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

interface InputRequest {
  method: 'elicitation/create';
  params: ReturnType<typeof formRequest>;
}

interface TaskFields {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

/** What `tools/call` answers when the call became a task. */
export type CreateTaskResult = TaskFields & { resultType: 'task' };

/** What `tasks/get` answers. */
type DetailedTask = TaskFields & {
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, InputRequest>;
};

/** Whether the client behind this request opted in to tasks (for its session or for this request). */
export function tasksOptedIn(server: Server, ctx: ServerContext): boolean {
  const declares = (capabilities: unknown) => {
    const extensions = isObject(capabilities) ? capabilities.extensions : undefined;
    return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined;
  };
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (
    declares(envelope?.[CLIENT_CAPABILITIES_META]) ||
    declares(ctx.mcpReq._meta?.[CLIENT_CAPABILITIES_META]) ||
    declares(server.getClientCapabilities())
  );
}

export function missingTasksCapability(what: string): ProtocolError {
  return new ProtocolError(MISSING_CAPABILITY, `${what} needs the ${TASKS_EXTENSION} extension: declare it in the client's capabilities`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

/** Questions tasks are waiting on, by task id then by input request id. */
export class TaskInputs {
  private readonly pending = new Map<string, Map<string, PendingQuestion>>();

  ask(taskId: string, request: InputRequest): Promise<unknown> {
    let questions = this.pending.get(taskId);
    if (!questions) this.pending.set(taskId, (questions = new Map<string, PendingQuestion>()));
    // The global Web Crypto: node:crypto loads when first used, not with the server.
    const key = `input-${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex')}`;
    const asked = questions;
    return new Promise((resolve) => asked.set(key, { request, answer: resolve }));
  }

  of(taskId: string): Record<string, InputRequest> | undefined {
    const questions = this.pending.get(taskId);
    if (!questions?.size) return undefined;
    return Object.fromEntries([...questions].map(([key, { request }]) => [key, request]));
  }

  /** Answers the questions named in `responses`; others stay open (a partial answer is fine). */
  answer(taskId: string, responses: Record<string, unknown>): void {
    const questions = this.pending.get(taskId);
    if (!questions) return;
    for (const [key, response] of Object.entries(responses)) {
      const question = questions.get(key);
      if (!question) continue;
      questions.delete(key);
      question.answer(response);
    }
    if (questions.size === 0) this.pending.delete(taskId);
  }

  /** The task ended: nothing it asked is awaited any more. */
  drop(taskId: string): void {
    const questions = this.pending.get(taskId);
    this.pending.delete(taskId);
    for (const question of questions?.values() ?? []) question.answer(undefined);
  }
}

/**
 * One `tools/call` that may become a task. Its `elicit` turns a question
 * into the task's input request (and makes the call a task at once).
 */
export class TaskCall {
  private escalate!: () => void;
  private readonly escalated = new Promise<void>((resolve) => (this.escalate = resolve));
  private settle!: (id: string | undefined) => void;
  private readonly taskId = new Promise<string | undefined>((resolve) => (this.settle = resolve));

  constructor(
    private readonly inputs: TaskInputs,
    /** 0: the call is always a task (`taskSupport: 'required'`). */
    private readonly windowMs: number,
  ) {}

  readonly elicit: Elicit = async (request) => {
    this.escalate();
    const id = await this.taskId;
    if (!id) return undefined;
    return formValues(await this.inputs.ask(id, { method: 'elicitation/create', params: formRequest(request) }));
  };

  /** True when the call should answer with a task: the run outlived the window or asked for input. */
  async becomesTask(done: Promise<unknown>): Promise<boolean> {
    if (this.windowMs <= 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const window = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), this.windowMs)));
    const ended = done.then(
      () => false as const,
      () => false as const,
    );
    try {
      return await Promise.race([window, this.escalated.then(() => true as const), ended]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The task exists: questions asked from now on (and before) are its input requests. */
  created(id: string, done: Promise<unknown>): void {
    this.settle(id);
    void done.then(
      () => this.inputs.drop(id),
      () => this.inputs.drop(id),
    );
  }

  /** The call answered inline: questions go the other ways (or are declined). */
  answeredInline(): void {
    this.settle(undefined);
  }
}

export function createTaskResult(view: RunView): CreateTaskResult {
  return { resultType: 'task', ...fields(view, 'working') };
}

/** The `tasks/get` view of a run. */
function detailedTask(view: RunView, inputs: TaskInputs): DetailedTask {
  switch (view.status) {
    case 'running': {
      const inputRequests = view.id ? inputs.of(view.id) : undefined;
      if (inputRequests) return { ...fields(view, 'input_required'), inputRequests };
      return { ...fields(view, 'working'), ...(view.progress ? { statusMessage: view.progress } : {}) };
    }
    case 'cancelled':
      return fields(view, 'cancelled');
    case 'interrupted':
      return failed(view, view.error ?? { code: 'INTERRUPTED', message: 'the run was interrupted' });
    case 'completed':
    case 'failed': {
      const error = view.result?.error ?? view.error;
      if (error && RUN_FAILURES.has(error.code)) return failed(view, error);
      const result = view.result
        ? runResult(view.result)
        : errorResult(error ?? { code: 'INTERNAL', message: 'the run ended without a result' });
      return { ...fields(view, 'completed'), result };
    }
  }
}

function failed(view: RunView, error: ErrorInfo): DetailedTask {
  return {
    ...fields(view, 'failed'),
    statusMessage: error.message,
    error: {
      code: ProtocolErrorCode.InternalError,
      message: error.message,
      data: { code: error.code, ...(error.data ? { details: error.data } : {}) },
    },
  };
}

function fields(view: RunView, status: TaskStatus): TaskFields {
  const createdAt = view.startedAt ?? new Date().toISOString();
  return {
    taskId: view.id ?? view.threadId,
    status,
    createdAt,
    lastUpdatedAt: view.updatedAt ?? createdAt,
    ttlMs: RUN_RECORD_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

const taskIdParams = z.looseObject({ taskId: z.string() });
// The SDK lifts `inputResponses` off the params into ctx.mcpReq.inputResponses (on 2026-07-28 requests).
const updateParams = z.looseObject({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() });

/** Registers tasks/get, tasks/update and tasks/cancel on one server instance. */
export function registerTaskMethods(server: Server, inputs: TaskInputs, getRuntime: () => Promise<Runtime>): void {
  const find = async (ctx: ServerContext, method: string, taskId: string): Promise<RunView> => {
    if (!tasksOptedIn(server, ctx)) throw missingTasksCapability(method);
    // Only tasks/get hands the outcome over.
    const view = await (await getRuntime()).handles.get(taskId, { delivering: method === 'tasks/get' });
    if (!view) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${method}: no task has the id "${taskId}"`);
    return view;
  };
  server.setRequestHandler('tasks/get', { params: taskIdParams }, async (params, ctx) => {
    // Typed as a plain result: the task's fields are this extension's, not the core schema's.
    return detailedTask(await find(ctx, 'tasks/get', params.taskId), inputs) as unknown as Record<string, unknown>;
  });
  server.setRequestHandler('tasks/update', { params: updateParams }, async (params, ctx) => {
    const view = await find(ctx, 'tasks/update', params.taskId);
    const responses = ctx.mcpReq.inputResponses ?? params.inputResponses;
    if (!responses)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'tasks/update: inputResponses must be an object of answers keyed by input request id',
      );
    if (view.status === 'running') inputs.answer(params.taskId, responses);
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params, ctx) => {
    await find(ctx, 'tasks/cancel', params.taskId);
    // Ending is reported by the next tasks/get; cancelling an ended task changes nothing.
    (await getRuntime()).handles.cancelById(params.taskId);
    return {};
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
