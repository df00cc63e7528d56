/**
 * One error type for everything agentport reports, told apart by a string
 * code. The codes below are the whole list: results, logs and the CLI carry
 * them unchanged, and the server turns them into MCP results at one place
 * (src/server/callTool.ts). docs/errors.md explains each one to users.
 */
export const ERROR_CODES = {
  // -- calls and definitions
  INVALID_ARGUMENTS: 'arguments (of a call, a tool or a store method) do not match what is expected',
  UNKNOWN_TOOL: 'no exposed tool, prompt or agent has that name',
  MISSING_VARIABLES: 'required variables have no value',
  DEFINITION_INVALID: 'the agents folder has definitions with errors',
  PROMPTY_INVALID: 'a .prompty file cannot be loaded',
  PROMPTY_RENDER: 'a .prompty template cannot be rendered with the given inputs',
  // -- models
  MODEL_CONFIG: 'a model is missing configuration (API key, base URL) or does not exist',
  MODEL_FAILED: 'the model provider failed after retries and fallbacks',
  TOOL_REQUIRED: 'the model kept answering without a tool although toolChoice is "required"',
  RESPONSE_INVALID: "the model's answer is not JSON of the prompt's responseSchema (or Prompty outputs)",
  // -- upstream MCP servers (agents/mcp.json)
  UPSTREAM_UNAVAILABLE: 'an upstream MCP server cannot be reached (it did not start, refused the connection or failed to list its tools)',
  UPSTREAM_FAILED: 'an upstream MCP server failed a call: a protocol error, a crash during the call or a timeout',
  // -- runs and sessions
  STEP_LIMIT: 'a side took more steps in one turn than its maxSteps (or --max-steps) allows',
  RUN_TIMEOUT: 'the run took longer than --run-timeout allows',
  SESSION_TURN_LIMIT: 'an agent session reached maxSessionTurns without a side ending it',
  SESSION_FAILED: "a side called its agent's sessionFail tool",
  CANCELLED: 'the caller cancelled the run',
  INTERRUPTED: 'the server stopped (shutdown or crash) before the run ended',
  RATE_LIMITED: 'the caller reached a per-user limit (--rate-limit calls per minute, --max-runs-per-user runs at once)',
  // -- threads and the store
  THREAD_NOT_FOUND: 'no thread has that id',
  THREAD_EXISTS: 'a thread with that id already exists',
  THREAD_TERMINATED: 'the thread was terminated and cannot run again',
  THREAD_BUSY: 'another process is running a turn of the thread',
  THREAD_LOCK_LOST: "the turn lost the thread's lock (its database connection dropped, or its lock file was taken over) and was stopped",
  INVALID_THREAD_ID: 'a thread id is not of the safe form',
  INVALID_PATH: 'a file path is malformed or escapes the folder it must stay in',
  SECRET_KEY_INVALID: 'the secret key does not hold 32 bytes',
  SECRET_DECRYPT_FAILED: 'a stored secret cannot be decrypted (wrong key or tampered data)',
  CORRUPT_DATA: 'stored data cannot be read as what it should be',
  UNSUPPORTED_VERSION: 'stored data was written by a newer format version',
  // -- anything else
  INTERNAL: 'an unexpected failure inside agentport (a bug: please report it)',
} as const;

export type AgentportErrorCode = keyof typeof ERROR_CODES;

/** An error as results carry it: `structuredContent.error` of an `isError` MCP result. */
export interface ErrorInfo {
  code: AgentportErrorCode;
  message: string;
  data?: Record<string, unknown>;
}

/** What every copy of this module marks its errors with (a registered symbol: the same in each copy). */
const AGENTPORT_ERROR = Symbol.for('agentport.error');

export class AgentportError extends Error {
  /**
   * An error made by another copy of this module is one too: a definition may import `agentport` from tsc's files
   * while the command runs the bundle (scripts/bundle.mjs), or the other way round, and each copy has its own class.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && AGENTPORT_ERROR in value;
  }

  constructor(
    readonly code: AgentportErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentportError';
  }

  info(): ErrorInfo {
    return { code: this.code, message: this.message, ...(this.data ? { data: this.data } : {}) };
  }
}

Object.defineProperty(AgentportError.prototype, AGENTPORT_ERROR, { value: true });

export function isAgentportError(value: unknown): value is AgentportError {
  return value instanceof AgentportError;
}

/** True for an {@link AgentportError} with that code. */
export function hasCode(value: unknown, code: AgentportErrorCode): value is AgentportError {
  return value instanceof AgentportError && value.code === code;
}

/** Any thrown value as an {@link ErrorInfo}; what is not an AgentportError is `INTERNAL`. */
export function errorInfo(error: unknown): ErrorInfo {
  return isAgentportError(error) ? error.info() : { code: 'INTERNAL', message: errorMessage(error) };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why an aborted run stops: the reason it was aborted with when that is an
 * AgentportError (INTERRUPTED at shutdown), CANCELLED otherwise.
 */
export function abortError(signal: AbortSignal | undefined): AgentportError {
  return isAgentportError(signal?.reason) ? signal.reason : new AgentportError('CANCELLED', 'the call was cancelled');
}

/** Throws when the signal has aborted (see abortError). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/**
 * The run of thread `threadId` stops: its caller or the server stopped it, or it lost its thread's lock. Not a failure
 * of the run itself, and no tool's error to hand to the model. A lock lost by another thread (a sub-prompt's or
 * subagent's) stopped that thread's run only: for this run it is a tool that failed.
 */
export function isStop(error: unknown, threadId?: string): error is AgentportError {
  return hasCode(error, 'CANCELLED') || hasCode(error, 'INTERRUPTED') || lostLock(error, threadId);
}

/** THREAD_LOCK_LOST for thread `threadId` (for any thread when none is given). */
export function lostLock(error: unknown, threadId?: string): error is AgentportError {
  if (!hasCode(error, 'THREAD_LOCK_LOST')) return false;
  const lost = error.data?.threadId;
  return threadId === undefined || lost === undefined || lost === threadId;
}
