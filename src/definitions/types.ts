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
  /** How long one call of this tool may take here, in milliseconds (overrides the tool's own timeoutMs). */
  timeoutMs?: number;
}

/** How a prompt used as another prompt's tool is called and what it returns. */
export interface SubpromptConfig<T extends string = string> {
  name: T;
  /** Defaults for the sub-prompt's variables, just above its own `env`. */
  env?: Record<string, string>;
  includeTextResponse?: boolean;
  includeToolCalls?: boolean;
  includeErrors?: boolean;
  initUserMessageProperty?: string;
  initAttachmentsProperty?: string;
}

/** How a dual_ai agent is used as a subagent tool. */
export interface SubagentToolConfig<T extends string = string> {
  name: T;
  /** Defaults for the agent's variables, just above its prompts' `env`. */
  env?: Record<string, string>;
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

/**
 * Tools of an upstream MCP server declared in agents/mcp.json: `mcp:<server>`
 * (all its tools) or `mcp:<server>/<tool>` (one). They are deferred behind
 * tool search unless always-loaded; the model sees them as `<server>__<tool>`.
 */
export interface UpstreamToolConfig {
  name: `mcp:${string}`;
  /** Offer these tools (their names on the server), or all with `true`, with their schemas at once. */
  alwaysLoad?: boolean | string[];
  /** Leave these tools out. */
  exclude?: string[];
  /** Only these tools. */
  tools?: string[];
  /** How long one call may take, in milliseconds (overrides the server's timeoutMs). */
  timeoutMs?: number;
}

export type ToolReference = string | ToolConfig | SubpromptConfig | SubagentToolConfig | UpstreamToolConfig;

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
  /**
   * How a call may run as an MCP task (for clients that opted in to the Tasks
   * extension): `optional` (default) answers inline when the run ends within
   * about a second and with a task otherwise; `required` always answers with
   * a task and refuses clients without the extension; `forbidden` never does.
   */
  taskSupport?: TaskSupport;
  /**
   * The tool's icon for MCP hosts: an `https:` or `data:` URL, or an image
   * file (absolute, or relative to the agents folder) sent as a data URL.
   */
  icon?: string;
  /** MCP tool annotations; unset hints keep agentport's (not read-only, open-world). */
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

export type TaskSupport = 'forbidden' | 'optional' | 'required';

export interface PromptDefinition<N extends string = string, S extends ToolArgs = ToolArgs> extends ExposureOptions {
  name: N;
  toolDescription: string;
  prompt: PromptContent;
  model: string;
  includeChat?: boolean;
  includePastTools?: boolean;
  parallelToolCalls?: boolean;
  toolChoice?: 'auto' | 'none' | 'required';
  requiredSchema?: S;
  /**
   * *agentport*: the shape of the answer. The model is asked for JSON of this
   * shape (`response_format`), the answer is parsed and checked, and the MCP
   * tool's output schema and `structuredContent.response` carry it. A Prompty
   * file's `outputs` become this.
   */
  responseSchema?: ToolArgs;
  tools?: ToolReference[];
  variables?: VariableDefinition[];
  env?: Record<string, string>;
  reasoning?: ReasoningConfig;
  recentImageThreshold?: number;
  hooks?: string[];
}

/** The inferred input type of a prompt with a `requiredSchema`. */
export type PromptInput<T extends PromptDefinition> = T['requiredSchema'] extends ToolArgs ? z.infer<T['requiredSchema']> : never;

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

/** What a tool or hook sees of the run while it executes (the spec's ExecutionState). */
export interface ExecutionState {
  /** Steps (model calls) taken so far in this session, both sides together. */
  readonly stepCount: number;
  /** The side whose turn it is: always 'a' outside dual_ai sessions. */
  readonly currentSide: 'a' | 'b';
  readonly sideAStepCount: number;
  readonly sideBStepCount: number;
  /** Whether `stop()` (or `terminate()`) was called. */
  readonly stopped: boolean;
  readonly stoppedBy?: 'a' | 'b';
  /** Aborts when the caller cancels. */
  readonly abortSignal: AbortSignal;
  /** Ends the session once the current step is done; the last response is its result. */
  stop(): void;
  /** Ends the current turn once the current step is done and gives the next turn to `side` (dual_ai). */
  forceTurn(side: 'a' | 'b'): void;
}

/** A message of a thread, as tools and hooks see it (the store's record). */
export type ThreadMessage = import('../store/types.js').StoredMessage;
/** A message to add to a thread: role and content, optionally tool fields and meta. */
export type NewThreadMessage = import('../store/types.js').NewMessage;
/** What `updateMessage` may change. */
export type MessageUpdate = Partial<Pick<ThreadMessage, 'content' | 'meta' | 'reasoning'>>;

export interface GetMessagesOptions {
  /** At most this many messages (default: all). */
  limit?: number;
  /** Skip this many messages first, counted in `order`. */
  offset?: number;
  /** `asc` (oldest first, the default) or `desc`. */
  order?: 'asc' | 'desc';
}

/** A file of the thread, as the file API reports it. */
export interface FileRecord extends AttachmentRef {}

export interface DirectoryEntry {
  name: string;
  path: string;
  type: 'file' | 'directory';
  /** Bytes, for files. */
  size?: number;
}

export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

/** What a thread shows of another (its parent, or one of its children). */
export interface ThreadView {
  readonly threadId: string;
  /** The agent or prompt it runs. */
  readonly agentId: string;
  /** The instance name, for a subagent thread. */
  readonly name?: string;
  readonly status: 'running' | 'idle' | 'terminated';
  getMessages(options?: GetMessagesOptions): Promise<{ messages: ThreadMessage[]; total: number; hasMore: boolean }>;
  getValue<T = unknown>(key: string): Promise<T | undefined>;
  readFile(path: string): Promise<Uint8Array | null>;
}

/** The thread a tool or hook runs in (the spec's ThreadState). */
export interface ThreadState {
  // -- identity
  readonly threadId: string;
  /** The agent running the thread, or the prompt when a prompt was called directly. */
  readonly agentId: string;
  /** The prompt running now (the current side's prompt in an agent session). */
  readonly prompt: string;
  /** The caller's subject on multi-user servers; null otherwise. */
  readonly userId: string | null;
  /** The validated arguments the thread was invoked with. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** When the thread was created, in microseconds since the epoch. */
  readonly createdAt: number;

  // -- messages
  getMessages(options?: GetMessagesOptions): Promise<{ messages: ThreadMessage[]; total: number; hasMore: boolean }>;
  getMessage(id: string): Promise<ThreadMessage | undefined>;
  /** Stores a message without running anything. */
  injectMessage(message: NewThreadMessage): Promise<ThreadMessage>;
  /** Delivers a message before the next step of the running turn, or starts a turn on an idle thread. */
  queueMessage(message: NewThreadMessage): Promise<void>;
  updateMessage(id: string, updates: MessageUpdate): Promise<ThreadMessage>;
  /** Deletes a message; deleting an assistant message deletes the results of its tool calls too. */
  deleteMessage(id: string): Promise<void>;

  // -- variables
  /** A variable's value (tool config env, prompt env, agent env, server env, thread and call values; later wins). */
  env(name: string): Promise<string | undefined>;
  /** 'secret' or 'text'; undefined for a name with no value. */
  envType(name: string): 'secret' | 'text' | undefined;
  /** Sets a variable for this thread (kept for later turns); a name nobody declared is secret unless `type: 'text'`. */
  setEnv(name: string, value: string, options?: { type?: 'secret' | 'text' }): Promise<void>;
  /** Values of the running tool's declared `tenvs`. */
  readonly tenvs: Record<string, unknown>;

  // -- durable per-thread values
  getValue<T = unknown>(key: string): Promise<T | undefined>;
  /** Stores a JSON value for the thread; `null` or `undefined` deletes the key. */
  setValue(key: string, value: unknown): Promise<void>;

  // -- tools
  /** Runs a tool of the current prompt now and returns its result (nothing is stored). */
  invokeTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** Queues a tool call: it runs before the next step as if the model had called it, and the model sees it. */
  queueTool(name: string, args: Record<string, unknown>): Promise<void>;

  // -- definitions
  loadPrompt(name: string): PromptDefinition | undefined;
  loadAgent(name: string): AgentDefinition | undefined;
  loadModel(name: string): ModelDefinition | undefined;
  getPromptNames(): string[];
  getAgentNames(): string[];
  getModelNames(): string[];

  // -- the thread's files (paths confined to the thread)
  writeFile(
    path: string,
    data: string | Uint8Array,
    mimeType: string,
    options?: { name?: string; description?: string; width?: number; height?: number },
  ): Promise<FileRecord>;
  /** The file's bytes, or null when there is none. */
  readFile(path: string): Promise<Uint8Array | null>;
  statFile(path: string): Promise<FileRecord | null>;
  /** Files and directories directly inside `path`. */
  readdirFile(path: string): Promise<DirectoryEntry[]>;
  unlinkFile(path: string): Promise<void>;
  /** Directories exist while they hold files: this checks the path and creates nothing. */
  mkdirFile(path: string): Promise<void>;
  /** Removes an empty directory; `recursive` removes what it holds. */
  rmdirFile(path: string, options?: { recursive?: boolean }): Promise<void>;
  /** Files whose path matches a glob (`*`, `**`, `?`). */
  findFiles(pattern: string): Promise<FileRecord[]>;
  /** Lines of text files matching a regular expression, optionally under `path` only. */
  grepFiles(pattern: string | RegExp, options?: { path?: string }): Promise<GrepMatch[]>;

  // -- subagents
  /** This thread's subagent instances. */
  readonly children: SubagentRegistryEntry[];
  /** A read view of a child thread, by its reference (thread id) or instance name. */
  getChildThread(reference: string): Promise<ThreadView | undefined>;
  /** A read view of the parent thread; undefined for a top-level thread. */
  getParentThread(): Promise<ThreadView | undefined>;
  /**
   * Sends a message to the parent thread (a subagent's only way to reach it with
   * `parentCommunication: 'explicit'`). It is queued to the parent like any message.
   */
  notifyParent(content: string, options?: { replyExpected?: boolean; attachments?: string[] }): Promise<void>;

  // -- execution
  readonly execution: ExecutionState;
  /** Ends the session now and marks the thread terminated: it cannot be continued. */
  terminate(): Promise<void>;
  /**
   * Per-execution values, not stored. `context.options` holds the static
   * `options` of the running tool's `{ name, options }` config.
   */
  readonly context: Record<string, unknown>;
}

export type ToolExecute<Args extends ToolArgs | null> = Args extends ToolArgs
  ? (state: ThreadState, args: z.infer<Args>) => Promise<ToolResult>
  : (state: ThreadState) => Promise<ToolResult>;

export interface DefineToolOptions<Args extends ToolArgs | null = null, Tenvs extends ToolTenvs | null = null> {
  description: string;
  args?: Args;
  execute: ToolExecute<Args>;
  tenvs?: Tenvs;
  variables?: VariableDefinition[];
  /** Announce this tool by name only until a tool search loads it. */
  defer?: boolean;
  /** Never defer this tool behind tool search. */
  alwaysLoad?: boolean;
  /** How long one call may take, in milliseconds (default: the server's --tool-timeout, 300 s). */
  timeoutMs?: number;
}

export interface ToolDefinition<Args extends ToolArgs | null = null, Tenvs extends ToolTenvs | null = null> extends DefineToolOptions<
  Args,
  Tenvs
> {}

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
  usage?: { promptTokens?: number; completionTokens?: number; cachedTokens?: number };
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
  /** US dollars per million input tokens: with outputPrice, calls of this model get a cost. */
  inputPrice?: number;
  /** US dollars per million output tokens. */
  outputPrice?: number;
  /** US dollars per million cached input tokens (default: inputPrice). */
  cachedPrice?: number;
}

// ---------------------------------------------------------------- hooks

/** A tool call as hooks see it: the arguments parsed (empty when they were not valid JSON). */
export interface HookToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What `after_thread_created` receives. */
export interface HookThread {
  id: string;
  /** The prompt or agent the thread runs. */
  prompt: string;
  parentId?: string;
  createdAt: string;
}

/** A child thread as the parent's `children` lists it. */
export interface SubagentRegistryEntry {
  /** The child's thread id. */
  reference: string;
  /** The instance name (`researcher#2`, or the name given to subagent_create). */
  name: string;
  /** The subagent (agent) it runs. */
  agent: string;
  description: string;
  status: 'running' | 'idle' | 'terminated';
  resumable: boolean;
  blocking: boolean;
  parentCommunication: 'implicit' | 'explicit';
  /** Microseconds since the epoch. */
  createdAt: number;
}

type Maybe<T> = T | void | undefined | Promise<T | void | undefined>;

/** The signature of each hook point: ThreadState first, then the point's data. */
export interface HookSignatures {
  /** The stored history before context assembly; may return a filtered list. */
  filter_messages: (state: ThreadState, messages: ThreadMessage[]) => Maybe<ThreadMessage[]>;
  /** The exact Chat Completions messages about to be sent; may return others. */
  prefilter_llm_history: (state: ThreadState, messages: ModelRequestMessage[]) => Maybe<ModelRequestMessage[]>;
  /** The rendered system message of the running prompt; may return a replacement. */
  after_system_message: (state: ThreadState, message: string) => Maybe<string>;
  before_create_message: (state: ThreadState, message: NewThreadMessage) => Maybe<NewThreadMessage>;
  after_create_message: (state: ThreadState, message: ThreadMessage) => Maybe<void>;
  before_update_message: (state: ThreadState, messageId: string, updates: MessageUpdate) => Maybe<MessageUpdate>;
  after_update_message: (state: ThreadState, message: ThreadMessage) => Maybe<void>;
  /** Right before a tool result is stored; may return a replacement. */
  before_store_tool_result: (state: ThreadState, toolCall: HookToolCall, result: ToolResult) => Maybe<ToolResult>;
  /** After a tool succeeded; may return a replacement result. */
  after_tool_call_success: (state: ThreadState, toolCall: HookToolCall, result: ToolResult) => Maybe<ToolResult | null>;
  /** After a tool failed; returning a result replaces the error (recovery). */
  after_tool_call_failure: (state: ThreadState, toolCall: HookToolCall, error: Error) => Maybe<ToolResult | null>;
  after_thread_created: (state: ThreadState, thread: HookThread) => Maybe<void>;
  /** On the parent, after a subagent's thread was created. */
  after_subagent_created: (state: ThreadState, child: SubagentRegistryEntry) => Maybe<void>;
}

export type HookName = keyof HookSignatures;

export interface HookDefinition<H extends HookName = HookName> {
  id: string;
  hook: H;
  execute: HookSignatures[H];
}

// ---------------------------------------------------------------- agents

/**
 * A session tool: a tool name, or the name plus which of its arguments carry
 * the message (default `message`) and the attachments.
 */
export type SessionToolBinding = string | { name: string; messageProperty?: string; attachmentsProperty?: string };

export interface AgentSide {
  /** Name of the prompt this side runs. */
  prompt: string;
  /** Shown in progress and logs (default: the prompt's name). */
  label?: string;
  /** The side's turn ends when it answers with text and no tool call (default true). */
  stopOnResponse?: boolean;
  /** Calling this tool ends the side's turn. */
  stopTool?: string;
  /** The argument of `stopTool` that is the turn's response. */
  stopToolResponseProperty?: string;
  /** Steps this side may take in one turn (default: the runtime's --max-steps). */
  maxSteps?: number;
  /** Calling this tool ends the session successfully; its message is the result. */
  sessionStop?: SessionToolBinding;
  /** Calling this tool ends the session as a failure; its message is the error. */
  sessionFail?: SessionToolBinding;
  /** Calling this tool reports progress; the session goes on. */
  sessionStatus?: SessionToolBinding;
  /** @deprecated use sessionStop */
  endSessionTool?: string;
  /** @deprecated use sessionFail */
  failSessionTool?: string;
  /** @deprecated use sessionStatus */
  statusTool?: string;
}

export interface AgentDefinition<N extends string = string> extends ExposureOptions {
  name: N;
  /** `ai_human`: one AI side talking to a person; `dual_ai`: two AI sides. */
  type?: 'ai_human' | 'dual_ai';
  toolDescription?: string;
  description?: string;
  sideA: AgentSide;
  sideB?: AgentSide;
  /** Turns (of both sides together) a dual_ai session may take before it ends as an error. */
  maxSessionTurns?: number;
  hooks?: string[];
  env?: Record<string, string>;
  /** Older name of `env`. */
  tenvs?: Record<string, string>;
  variables?: VariableDefinition[];
  tags?: string[];
  /** Packaging metadata, kept as written. */
  packageName?: string;
  version?: string;
  author?: string;
  license?: string;
}
