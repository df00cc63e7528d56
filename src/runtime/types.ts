/**
 * The runtime's public shapes: what a caller asks for and what a run returns.
 */
import type { Usage } from '../models/usage.js';
import type { AttachmentRef } from '../definitions/types.js';
import type { Store } from '../store/types.js';
import type { Registry } from '../registry/types.js';
import type { ErrorInfo } from '../errors.js';
import type { Elicit } from './run/types.js';
import type { UpstreamHub } from '../upstream/hub.js';

export interface RuntimeOptions {
  registry: Registry;
  store: Store;
  env?: Readonly<Record<string, string | undefined>>;
  /** Steps (model calls) allowed in one run before it stops with an error. Default 25. */
  maxSteps?: number;
  /** Turns of a dual_ai session whose agent sets no maxSessionTurns. Default 20. */
  maxSessionTurns?: number;
  /** Sub-prompt nesting allowed before a run is stopped as runaway recursion. Default 8. */
  maxDepth?: number;
  /** Interval of heartbeat progress while a model call is in flight. Default 10 s. */
  heartbeatMs?: number;
  /** How long a function tool may run unless it (or its tool config) sets timeoutMs. Default 300 s. */
  toolTimeoutMs?: number;
  /** How long a whole call may run before it stops with RUN_TIMEOUT. Default: no limit. */
  runTimeoutMs?: number;
  /** Base delay of the backoff between model retries (doubling each time). Default 500 ms. */
  retryBaseDelayMs?: number;
  /** A prompt with more tools than this shows the model their names only, plus tool_search. Default 40. */
  toolSearchThreshold?: number;
  /** Where log lines go (stderr by default); secrets are redacted before it is called. */
  log?: (line: string) => void;
  /** The upstream MCP servers (default: the registry's agents/mcp.json, one hub per registry); null: none. */
  upstream?: UpstreamHub | null;
}

export interface RunRequest {
  /** Name of an exposed prompt or agent. */
  target: string;
  args: Record<string, unknown>;
  /** Values for declared variables supplied with this call (highest precedence). */
  variables?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * A controller of the caller's own given over to the run instead of `signal`: the run stops when it is
   * aborted, and aborts it itself when the server shuts down, rather than linking a controller of its
   * own to the caller's signal, which costs a call an AbortSignal and a listener.
   */
  controller?: AbortController;
  /** Called with a human-readable message as the run advances. */
  onProgress?: (message: string) => void;
  /** Asks the caller's user for values (MCP elicitation), when the client supports it. */
  elicit?: Elicit;
  /** Told the thread's id as soon as the run has one (before it runs), for run handles. */
  onThread?: (threadId: string) => void;
  /**
   * The subject the call is made for (OAuth `sub`): a new thread belongs to it,
   * and only its own threads can be continued. Default: the caller of the
   * request being served (run/owner.ts), none outside authenticated HTTP.
   */
  owner?: string;
}

export interface ToolCallRecord {
  id: string;
  name: string;
  /** Raw JSON text of the arguments the model sent. */
  arguments: string;
  status: 'success' | 'error';
  result?: string;
  error?: string;
  /** Files the call stored with its result (the thread's /attachments/), linked from MCP results. */
  attachments?: AttachmentRef[];
}

export interface RunResult {
  threadId: string;
  /** The prompt that ran (an agent runs its side A prompt). */
  prompt: string;
  text: string;
  /** The answer parsed, for a prompt with a responseSchema (and no error). */
  data?: Record<string, unknown>;
  /** Reasoning the model returned, unless the prompt's reasoning.exclude is set. */
  reasoning?: string;
  toolCalls: ToolCallRecord[];
  /** Model calls, all sides together. */
  steps: number;
  /** Tokens and cost of the run's model calls, its sub-prompts' and blocking subagents' included. */
  usage?: Usage;
  /** Turns of the session (1 for a prompt or an ai_human agent). */
  turns: number;
  /** Thread file paths the session handed over (the sessionStop tool's attachmentsProperty). */
  attachments?: string[];
  /** Set when the run ended as an error (step or turn limit, sessionFail, model failure). */
  error?: ErrorInfo;
}
