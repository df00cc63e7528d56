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
}
