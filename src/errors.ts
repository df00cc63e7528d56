/**
 * One error type for everything agentport reports, told apart by a string code.
 * The server translates these at one boundary (src/server/callTool.ts).
 */
export type AgentportErrorCode =
  /** Call arguments do not match the tool's input schema. */
  | 'INVALID_ARGUMENTS'
  /** No exposed tool or prompt has that name. */
  | 'UNKNOWN_TOOL'
  /** A model is missing configuration (API key, base URL). */
  | 'MODEL_CONFIG'
  /** The model provider failed after retries and fallbacks. */
  | 'MODEL_FAILED'
  /** Required variables have no value. */
  | 'MISSING_VARIABLES'
  /** The caller cancelled the run. */
  | 'CANCELLED';

export class AgentportError extends Error {
  constructor(
    readonly code: AgentportErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AgentportError';
  }
}

export function isAgentportError(value: unknown): value is AgentportError {
  return value instanceof AgentportError;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
