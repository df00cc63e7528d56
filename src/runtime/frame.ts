/**
 * Everything one run (a call, or a sub-prompt inside it) works with.
 */
import type { AgentDefinition, ModelRequestMessage } from '../definitions/types.js';
import type { ModelResolver } from '../models/resolveModel.js';
import type { Entry, LoadedPrompt, Registry } from '../registry/types.js';
import type { Store, StoredMessage, ThreadRecord } from '../store/types.js';
import type { HookRunner } from './hooks.js';
import type { Redactor } from './secrets.js';
import type { OfferedTool } from './toolset.js';
import type { VariableScope } from './variables.js';

/** Shared by every run of one runtime. */
export interface Services {
  registry: Registry;
  store: Store;
  models: ModelResolver;
  env: Readonly<Record<string, string | undefined>>;
  maxSteps: number;
  maxDepth: number;
  heartbeatMs: number;
  toolSearchThreshold: number;
  retryBaseDelayMs: number | undefined;
  log: (line: string) => void;
  toolsetFor(prompt: LoadedPrompt): OfferedTool[];
}

export interface RunFrame {
  services: Services;
  thread: ThreadRecord;
  prompt: LoadedPrompt;
  agent: Entry<AgentDefinition> | undefined;
  scope: VariableScope;
  redactor: Redactor;
  hooks: HookRunner;
  signal: AbortSignal;
  progress: (message: string) => void;
  /** Prompt names from the top-level run down to this one. */
  ancestry: string[];
  /** Seq of this turn's first message: earlier messages are chat history. */
  turnStartSeq: number;
  /**
   * Every message of the thread, read once when the run starts and extended as
   * the run stores more: steps never re-read the store.
   */
  messages: StoredMessage[];
  /** A sub-prompt with includeChat sees its parent's conversation first. */
  parentChat: StoredMessage[];
  /** Sent before the history at every step: the system prompt, or a prompty preamble. */
  preamble: ModelRequestMessage[];
  /** The tools offered in this run (a prompty body may add some per call). */
  toolset: OfferedTool[];
}
