/**
 * What one run works with. A run is one call of a prompt or agent on one
 * thread: a top-level MCP or CLI call, or a sub-prompt called as a tool. It
 * has one or two sides (an agent's side A and side B; a prompt is a run with
 * side A only), each with its own prompt, tools, preamble and hooks.
 */
import type { AgentDefinition, ModelRequestMessage, ToolResult } from '../../definitions/types.js';
import type { AgentportError, ErrorInfo } from '../../errors.js';
import type { ModelResolver } from '../../models/resolveModel.js';
import type { Entry, LoadedPrompt, Registry } from '../../registry/types.js';
import type { NewMessage, Store, StoredMessage, ThreadRecord } from '../../store/types.js';
import type { HookRunner } from '../hooks/hooks.js';
import type { Execution } from '../state/execution.js';
import type { DeferredTools } from '../tools/deferredTools.js';
import type { OfferedTool } from '../tools/toolset.js';
import type { ToolCallRecord } from '../types.js';
import type { Redactor } from '../variables/secrets.js';
import type { VariableScope } from '../variables/variables.js';
import type { Usage } from '../../models/usage.js';
import type { UpstreamHub } from '../../upstream/hub.js';

/** Shared by every run of one runtime. */
export interface Services {
  registry: Registry;
  store: Store;
  models: ModelResolver;
  env: Readonly<Record<string, string | undefined>>;
  maxSteps: number;
  maxDepth: number;
  maxSessionTurns: number;
  heartbeatMs: number;
  /** How long a function tool may run when neither it nor its config says. */
  toolTimeoutMs: number;
  toolSearchThreshold: number;
  retryBaseDelayMs: number | undefined;
  log: (line: string) => void;
  /** The tools of a prompt, built once per prompt. */
  toolsetFor(prompt: LoadedPrompt): OfferedTool[];
  /** The upstream MCP servers of agents/mcp.json (one client each for the process), when there are any. */
  upstream: UpstreamHub | undefined;
  /** Runs in progress in this process, by thread id. */
  activeRuns: Map<string, Run>;
  /**
   * Threads whose turn lost its store lock (THREAD_LOCK_LOST) while that turn is still in its lock's scope: a run
   * starting on one then stops at once (execute.ts), as the one running was stopped (runtime.ts withThreadLock).
   */
  lostLocks: Map<string, AgentportError>;
  /** Starts a turn on an idle thread with a queued message (ThreadState.queueMessage). */
  startQueuedTurn(threadId: string, message: NewMessage): void;
  /**
   * Read-modify-write of a thread's meta, one at a time per thread and from a
   * fresh read, so runs and subagents writing the same thread lose nothing.
   */
  patchThreadMeta(threadId: string, patch: (meta: Record<string, unknown>) => Record<string, unknown>): Promise<ThreadRecord>;
  /** Aborted (with INTERRUPTED) when the server shuts down: every run's signal follows it. */
  stopping: AbortController;
  /** Runs `work` after every earlier turn of the thread has ended: turns of one thread never overlap. */
  serialize<T>(threadId: string, work: () => Promise<T>): Promise<T>;
  /**
   * The engine's entry points for modules below it (sub-prompt tools,
   * ThreadState.invokeTool), wired by the runtime so they need not import it.
   */
  engine: {
    runToCompletion(run: Run): Promise<SessionResult>;
    invokeTool(run: Run, side: Side, name: string, args: Record<string, unknown>): Promise<ToolResult>;
  };
}

/** How a session ended. */
export interface SessionResult {
  /** The result text: the last turn's response, or the sessionStop message. */
  text: string;
  reasoning?: string;
  /** Set when the session ended as an error (step or turn limit, sessionFail, model failure). */
  error?: ErrorInfo;
  /** Paths bound by the sessionStop tool's attachmentsProperty. */
  attachments?: string[];
  turns: number;
}

/** What a side's tool call can mean to the session, beyond its result. */
export type ControlRole = 'session_stop' | 'session_fail' | 'session_status' | 'stop_tool';

export interface ControlBinding {
  role: ControlRole;
  name: string;
  /** The argument holding the message (session tools) or the turn's response (stop tool). */
  messageProperty: string;
  attachmentsProperty?: string;
}

/** One side of a session. */
export interface Side {
  key: 'a' | 'b';
  /** For progress and logs: the side's label, or its prompt's name. */
  label: string;
  prompt: LoadedPrompt;
  stopOnResponse: boolean;
  maxSteps: number;
  /** Session and stop tools of this side, by tool name. */
  controls: ReadonlyMap<string, ControlBinding>;
  toolset: OfferedTool[];
  deferred: DeferredTools;
  /** Sent before the history at every step: the system prompt, or a prompty preamble. */
  preamble: ModelRequestMessage[];
  hooks: HookRunner;
}

export interface Run {
  services: Services;
  thread: ThreadRecord;
  /** The agent whose session this is; undefined when a prompt was called directly. */
  agent: Entry<AgentDefinition> | undefined;
  /** Two sides alternate (a dual_ai agent). */
  dual: boolean;
  sides: { a: Side; b?: Side };
  /** The validated arguments of this call. */
  args: Record<string, unknown>;
  scope: VariableScope;
  redactor: Redactor;
  signal: AbortSignal;
  progress: (message: string) => void;
  /** Prompt names from the top-level run down to this one. */
  ancestry: string[];
  /** Seq of this call's first message: earlier messages are chat history. */
  sessionStartSeq: number;
  /**
   * The thread's messages the run uses, kept up to date as the run stores,
   * updates and deletes: steps never re-read the store. Earlier turns are
   * read only when something needs them (`includeChat`, an interrupted turn
   * to show again, ThreadState's message API, a sub-prompt that sees its
   * caller's conversation): see run/history.ts. Until then this holds the
   * run's own messages only and `history` is false.
   */
  messages: StoredMessage[];
  /** Whether `messages` holds the thread's earlier turns too. */
  history: boolean;
  /** A sub-prompt with includeChat sees its parent's conversation first. */
  parentChat: StoredMessage[];
  execution: Execution;
  /** Messages and tool calls queued by ThreadState, delivered before the next step. */
  queue: QueuedItem[];
  /** Per-execution values (ThreadState.context), not stored. */
  context: Record<string, unknown>;
  /** What the session did so far, for results and error reports. */
  tally: { toolCalls: ToolCallRecord[]; steps: number; usage: Usage };
  /** Set once the session ended: later queueMessage calls start a new turn. */
  finished: boolean;
  /** Settles when the run has ended and recorded its outcome (set while it runs). */
  ended?: Promise<unknown>;
  /** Aborts the run (shutdown aborts every active run with INTERRUPTED). */
  abort: (reason: unknown) => void;
  /**
   * Marks the thread running in the store now (a run that outlives its call), set while it runs; resolves once the
   * mark is written and the thread's lock taken (or found held by the turn). A lock the store fails to take is
   * logged, or thrown for a run `handedOver` to the background (which must hold it).
   */
  markRunning?: (options?: { handedOver?: boolean }) => Promise<void>;
  /**
   * The thread's opening messages wait for its next write (AppendOptions.withNextWrite): set by a new
   * thread's opening, cleared by the next message this run stores. See writeOpening (loop/storeMessage.ts).
   */
  openingWaits?: boolean;
  /** The side that takes the first turn (a resumable subagent receiving on side B starts there). */
  firstSide: 'a' | 'b';
  /** The run that called this one (a sub-prompt's or subagent's caller). */
  parent?: Run;
  /** Asks the person behind the MCP call for values (elicitation), when the client can. */
  elicit?: Elicit;
}

/** A form for the person behind the call: text fields, secret ones marked. Resolves with the values, or undefined. */
export type Elicit = (request: {
  message: string;
  fields: Array<{ name: string; description: string; secret: boolean; required: boolean }>;
}) => Promise<Record<string, string> | undefined>;

/** Work queued through ThreadState, for the side whose tool or hook queued it. */
type QueuedItem = { side: 'a' | 'b' } & (
  { kind: 'message'; message: NewMessage } | { kind: 'tool'; name: string; args: Record<string, unknown> }
);
