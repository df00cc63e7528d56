import type { LoadIssue } from '../definitions/issues.js';
import type { LoadedPrompty } from '../prompty/types.js';
import type { UpstreamConfig } from '../upstream/config.js';
import type {
  AgentDefinition,
  HookDefinition,
  ModelDefinition,
  PromptDefinition,
  ToolArgs,
  ToolDefinition,
  ToolTenvs,
} from '../definitions/types.js';

/** A definition together with where it came from. */
export interface Entry<T> {
  name: string;
  file: string;
  definition: T;
}

export type AnyToolDefinition = ToolDefinition<ToolArgs | null, ToolTenvs | null>;

export interface LoadedPrompt extends Entry<PromptDefinition> {
  /** The system prompt with every include resolved. */
  systemText: string;
  /** For a `.prompty` file: the template rendered into messages at each call. */
  prompty?: LoadedPrompty;
}

/** Everything in an agents/ folder, validated and cross-checked. */
export interface Registry {
  agentsDir: string;
  models: ReadonlyMap<string, Entry<ModelDefinition>>;
  prompts: ReadonlyMap<string, LoadedPrompt>;
  tools: ReadonlyMap<string, Entry<AnyToolDefinition>>;
  hooks: ReadonlyMap<string, Entry<HookDefinition>>;
  agents: ReadonlyMap<string, Entry<AgentDefinition>>;
  /** Upstream MCP servers declared in agents/mcp.json (see src/upstream/). */
  upstream?: UpstreamConfig;
  /** Problems that did not stop loading. */
  warnings: LoadIssue[];
  /**
   * Set when definitions are imported on first use (`serve` from its start-up
   * cache, see lazyRegistry.ts): the maps know every name at once and import
   * a definition's file when it is first read.
   */
  lazy?: LazyLoading;
}

/** The secrets a folder declares, by the names of the environment variables holding them. */
export interface SecretNames {
  /** Declared variables of type `secret` (prompts, agents, tools). */
  variables: readonly string[];
  /** The models' `apiKeyEnv`. */
  apiKeyEnvs: readonly string[];
}

export interface LazyLoading {
  /**
   * Imports what the named prompts or agents need (their files and those of
   * the definitions they reference), asynchronously, so a call then finds
   * them loaded; with no names, only gets the module loader ready. Rejects
   * with `DEFINITION_INVALID` when a file no longer loads cleanly.
   */
  prepare(names?: readonly string[]): Promise<void>;
  /** Known without importing anything. */
  secretNames: SecretNames;
}
