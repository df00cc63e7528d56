/**
 * The definition types of the agents/ folder. They follow the Standard Agents
 * specification (prompts, tools, models, hooks, agents) and add the few fields
 * agentport needs to publish definitions as MCP tools (`exposeAsTool`, `title`,
 * `alwaysLoad`, `defer`).
 */
import type { z } from 'zod';

// ---------------------------------------------------------------- prompts

export interface PromptTextPart {
  type: 'text';
  content: string;
}

export interface PromptIncludePart {
  type: 'include';
  /** Name of the prompt whose `prompt` field is inserted here. */
  prompt: string;
}

export type PromptPart = PromptTextPart | PromptIncludePart;
export type StructuredPrompt = PromptPart[];
export type PromptContent = string | StructuredPrompt;

/** A tool reference that also provides env defaults or static options. */
export interface ToolConfig<T extends string = string> {
  name: T;
  env?: Record<string, string>;
  options?: Record<string, unknown>;
}

/** How a prompt used as another prompt's tool is called and what it returns. */
export interface SubpromptConfig<T extends string = string> {
  name: T;
  includeTextResponse?: boolean;
  includeToolCalls?: boolean;
  includeErrors?: boolean;
  initUserMessageProperty?: string;
  initAttachmentsProperty?: string;
}

/** How a dual_ai agent is used as a subagent tool. */
export interface SubagentToolConfig<T extends string = string> {
  name: T;
  blocking?: boolean;
  initUserMessageProperty?: string;
  initAttachmentsProperty?: string;
  initAgentNameProperty?: string;
  immediate?:
    | boolean
    | {
        nameEnv?: string;
        descriptionEnv?: string;
        scopedEnv?: string[];
      };
  optional?: string;
  resumable?:
    | false
    | {
        receives_messages: 'side_a' | 'side_b';
        maxInstances?: number;
        parentCommunication?: 'implicit' | 'explicit';
      };
}

export type ToolReference = string | ToolConfig | SubpromptConfig | SubagentToolConfig;

export interface ReasoningConfig {
  effort?: 'low' | 'medium' | 'high';
  maxTokens?: number;
  exclude?: boolean;
  include?: boolean;
}

export interface VariableDefinition {
  name: string;
  type: 'text' | 'secret';
  required: boolean;
  scoped?: boolean;
  description: string;
}

/** A zod object schema: the only shape allowed for tool arguments and prompt inputs. */
// The shape is deliberately loose: any zod object is acceptable here.
export type ToolArgs = z.ZodObject<z.ZodRawShape>;
export type ToolTenvs = z.ZodObject<z.ZodRawShape>;

/** Fields agentport adds to prompts and agents to control how they appear over MCP. */
export interface ExposureOptions {
  /** Publish this definition as an MCP tool. */
  exposeAsTool?: boolean;
  /** Human-friendly title shown by MCP hosts; defaults to the name. */
  title?: string;
  /** With deferred tool search on, keep this tool in `tools/list` anyway. */
  alwaysLoad?: boolean;
  /** Announce this tool by name only until a tool search loads it. */
  defer?: boolean;
}

export interface PromptDefinition<N extends string = string, S extends ToolArgs = ToolArgs>
  extends ExposureOptions {
  name: N;
  toolDescription: string;
  prompt: PromptContent;
  model: string;
  includeChat?: boolean;
  includePastTools?: boolean;
  parallelToolCalls?: boolean;
  toolChoice?: 'auto' | 'none' | 'required';
  requiredSchema?: S;
  tools?: ToolReference[];
  variables?: VariableDefinition[];
  env?: Record<string, string>;
  reasoning?: ReasoningConfig;
  recentImageThreshold?: number;
  hooks?: string[];
}

/** The inferred input type of a prompt with a `requiredSchema`. */
export type PromptInput<T extends PromptDefinition> =
  T['requiredSchema'] extends ToolArgs ? z.infer<T['requiredSchema']> : never;

// ---------------------------------------------------------------- tools

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

export type ToolContent = TextContent | ImageContent;

/** A new file produced by a tool (base64 data). */
export interface ToolAttachment {
  name: string;
  mimeType: string;
  data: string;
  width?: number;
  height?: number;
}

/** A file already stored in the thread's files. */
export interface AttachmentRef {
  id: string;
  type: 'file';
  path: string;
  name: string;
  mimeType: string;
  size: number;
  width?: number;
  height?: number;
  description?: string;
}

export interface ToolResult {
  status: 'success' | 'error';
  result?: string;
  error?: string;
  stack?: string;
  attachments?: Array<ToolAttachment | AttachmentRef>;
}

/** What a tool sees of the run while it executes. */
export interface ExecutionState {
  stepCount: number;
  currentSide: 'a' | 'b';
  abortSignal: AbortSignal;
}

/** The thread a tool runs in. */
export interface ThreadState {
  threadId: string;
  /** Name of the prompt the thread runs. */
  prompt: string;
  /** Resolve a variable (tool env, prompt env, agent env, thread/call values; later wins). */
  env(name: string): Promise<string | undefined>;
  /** Values for the tool's declared `tenvs`. */
  tenvs: Record<string, unknown>;
  execution: ExecutionState;
}

export type ToolExecute<Args extends ToolArgs | null> = Args extends ToolArgs
  ? (state: ThreadState, args: z.infer<Args>) => Promise<ToolResult>
  : (state: ThreadState) => Promise<ToolResult>;

export interface DefineToolOptions<
  Args extends ToolArgs | null = null,
  Tenvs extends ToolTenvs | null = null,
> {
  description: string;
  args?: Args;
  execute: ToolExecute<Args>;
  tenvs?: Tenvs;
  variables?: VariableDefinition[];
  /** Announce this tool by name only until a tool search loads it. */
  defer?: boolean;
  /** Never defer this tool behind tool search. */
  alwaysLoad?: boolean;
}

export interface ToolDefinition<
  Args extends ToolArgs | null = null,
  Tenvs extends ToolTenvs | null = null,
> extends DefineToolOptions<Args, Tenvs> {}

// ---------------------------------------------------------------- models

export interface ModelRequestMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: unknown;
  [key: string]: unknown;
}

/** A request in OpenAI Chat Completions shape, which every provider receives. */
export interface ModelRequest {
  model: string;
  messages: ModelRequestMessage[];
  tools?: unknown[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  [key: string]: unknown;
}

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelResponse {
  text: string | null;
  toolCalls: ModelToolCall[];
  reasoning?: string;
  finishReason?: string;
  usage?: { promptTokens?: number; completionTokens?: number };
}

/** A model provider other than the built-in OpenAI-compatible one. */
export interface ModelProvider {
  complete(request: ModelRequest, options: { signal?: AbortSignal }): Promise<ModelResponse>;
}

export interface ModelDefinition<N extends string = string> {
  name: N;
  /** `'openai'` is the built-in OpenAI-compatible provider. */
  provider: 'openai' | ModelProvider;
  /** The model id sent to the provider. */
  model: string;
  /** Base URL of an OpenAI-compatible API; `OPENAI_BASE_URL` applies when absent. */
  baseURL?: string;
  /** Name of the environment variable that holds the API key (default `OPENAI_API_KEY`). */
  apiKeyEnv?: string;
  /** Names of other models to try, in order, when this one keeps failing. */
  fallbacks?: string[];
  temperature?: number;
  maxTokens?: number;
  /** Request timeout in milliseconds. */
  timeoutMs?: number;
  /** Retries on 429, 5xx and timeouts before fallbacks are tried (default 2). */
  maxRetries?: number;
  /**
   * How `reasoning` settings are sent: `openai` sends `reasoning_effort`;
   * `openrouter` sends `reasoning: { effort, max_tokens, exclude }`.
   */
  reasoningStyle?: 'openai' | 'openrouter';
  /** Extra fields merged into every request body. */
  options?: Record<string, unknown>;
}

// ---------------------------------------------------------------- hooks

export type HookName =
  | 'filter_messages'
  | 'prefilter_llm_history'
  | 'before_create_message'
  | 'after_create_message'
  | 'before_store_tool_result'
  | 'after_tool_call_success'
  | 'after_tool_call_failure'
  | 'after_thread_created';

export interface HookDefinition<H extends HookName = HookName> {
  id: string;
  hook: H;
  // Each hook point passes its own data; the runtime documents the shapes.
  execute: (state: ThreadState, data: unknown) => unknown;
}

// ---------------------------------------------------------------- agents

export interface AgentSide {
  label?: string;
  /** Name of the prompt this side runs. */
  prompt: string;
  stopOnResponse?: boolean;
  stopTool?: string;
  stopToolResponseProperty?: string;
  maxSteps?: number;
  endConversationTool?: string;
}

export interface AgentDefinition<N extends string = string> extends ExposureOptions {
  name: N;
  /** `ai_human`: one AI side talking to a person; `dual_ai`: two AI sides. */
  type?: 'ai_human' | 'dual_ai';
  toolDescription?: string;
  sideA: AgentSide;
  sideB?: AgentSide;
  maxSessionTurns?: number;
  hooks?: string[];
  env?: Record<string, string>;
  variables?: VariableDefinition[];
  tags?: string[];
}
