/**
 * Public data types of the `.prompty` loader and renderer.
 *
 * A `.prompty` file is loaded once into a {@link LoadedPrompty} (frontmatter checked, replacement
 * constructs resolved, template checked) and rendered per call into {@link PromptyMessage}s.
 */
import type { z } from 'zod';
import type { PromptyIssue } from './errors.js';

/**
 * Roles a rendered message can carry (`function:` sections map to `tool`; `developer:` sections are
 * sent as `system`, see {@link PromptyChatMessage.declaredRole}).
 */
type PromptyRole = 'system' | 'user' | 'assistant' | 'tool';

/** The template engines a `.prompty` body can use. */
export type PromptyEngine = 'mustache' | 'jinja2';

/** One piece of a message's content. */
export type PromptyPart =
  | { type: 'text'; text: string }
  /** An image link; `url` is http(s) or a `data:` URL (local files are inlined). */
  | { type: 'image'; url: string; attributes: Record<string, string> }
  /** Any other media link (`![file](...)`, `![type="audio"](...)`); same URL rules as images. */
  | { type: 'file'; url: string; attributes: Record<string, string> };

/** A tool call written in the template as an `assistant[type="tool_call"]:` section. */
export interface PromptyToolCall {
  id: string;
  /** Function name. */
  name: string;
  /** The arguments as JSON text (an object written in YAML is serialized). */
  arguments: string;
}

/** A chat message produced by a role section. */
export interface PromptyChatMessage {
  kind: 'message';
  role: PromptyRole;
  /** Every `key="value"` attribute of the role marker, as written (after rendering). */
  attributes: Record<string, string>;
  /** Text and media parts; empty for a tool-call-only assistant message. */
  content: PromptyPart[];
  /** Present on `assistant[type="tool_call"]` messages. */
  toolCalls?: PromptyToolCall[];
  /** Present on tool messages: the call this message answers. */
  toolCallId?: string;
  /** The `name` attribute (user name, or the tool's name on tool messages). */
  name?: string;
  /**
   * The role written in the template when it differs from `role`: a `developer:` section is a
   * `system` message (what OpenAI-compatible servers accept everywhere; OpenAI itself treats the two
   * alike) and says `developer` here.
   */
  declaredRole?: 'developer';
}

/** Where the conversation history goes (`thread:` section or an `![thread]` line). */
interface PromptyThreadMarker {
  kind: 'thread';
  attributes: Record<string, string>;
}

/** An item of a rendered prompt. */
export type PromptyMessage = PromptyChatMessage | PromptyThreadMarker;

/** The object form of the frontmatter `model` field, normalized. */
export interface PromptyModelObject {
  /** Model id (for agentport: the name of a defined model, or the provider's model id). */
  id: string;
  /** Provider name (`configuration.type` in older files). */
  provider?: string;
  /** Prompty `api` (e.g. `chat`), kept as written. */
  api?: string;
  /** Connection settings (`configuration` in older files). */
  connection?: Record<string, unknown>;
  /** Request options such as temperature (`parameters` in older files). */
  options?: Record<string, unknown>;
  /**
   * The OpenAI-compatible base URL: `connection.baseURL` (or `base_url`), or for the `openai`
   * provider `connection.endpoint`.
   */
  baseURL?: string;
  /**
   * The name of the variable holding the API key: `connection.api_key_env` (or `apiKeyEnv`), or the
   * variable of a key written as `${env:NAME}`.
   */
  apiKeyEnv?: string;
}

/** Input types accepted in `inputs` (aliases are normalized to these). */
export type PromptyInputType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';

/** One declared input, normalized from the list or map form of `inputs`. */
export interface PromptyInput {
  name: string;
  type: PromptyInputType;
  description?: string;
  /** False when `required: false` or a `default` is given (a `sample` value counts as a default). */
  required: boolean;
  /** Present only when the file gives one, in the declaration or in `sample`. */
  default?: unknown;
  /** Allowed values (`enum` or `enumValues`). */
  enum?: Array<string | number | boolean>;
  /** Example value (`example`), kept for documentation. */
  example?: unknown;
  /** Item declaration of an `array` input (a type or a full declaration). */
  items?: PromptyInput;
  /** Property declarations of an `object` input; without them any object is accepted. */
  properties?: PromptyInput[];
}

/** Reasoning settings passed through to the prompt definition. */
interface PromptyReasoning {
  effort?: 'low' | 'medium' | 'high';
  maxTokens?: number;
  exclude?: boolean;
  include?: boolean;
}

/**
 * agentport prompt fields that a `.prompty` frontmatter may set; they are passed through unchanged
 * (after type checks) to the prompt definition.
 */
export interface PromptyFields {
  exposeAsTool?: boolean;
  toolChoice?: 'auto' | 'none' | 'required';
  reasoning?: PromptyReasoning;
  hooks?: string[];
  /** Tool references: names or config objects (`{name, ...}` or `{id, type, options}`). */
  tools?: Array<string | Record<string, unknown>>;
  includeChat?: boolean;
  includePastTools?: boolean;
  parallelToolCalls?: boolean;
  recentImageThreshold?: number;
  env?: Record<string, string>;
  /** Variable declarations, checked only to be objects here. */
  variables?: Array<Record<string, unknown>>;
  alwaysLoad?: boolean;
  defer?: boolean;
}

/** A `.prompty` file after loading. Immutable; render it as often as needed. */
export interface LoadedPrompty {
  /** Absolute path of the file. */
  file: string;
  /** Absolute path of the agents folder that media and `${file:}` paths are confined to. */
  agentsDir: string;
  /** `name`, or the file name without `.prompty` when absent. */
  name: string;
  /** `description`: the MCP tool description (`toolDescription`). */
  description: string;
  /** A model name, or the normalized object form. */
  model: string | PromptyModelObject;
  /** Call inputs as a zod object schema (with `.describe()` texts); `z.object({})` when none. */
  inputSchema: z.ZodObject;
  /** The normalized input declarations the schema was built from. */
  inputs: PromptyInput[];
  /**
   * `sample` as written (after `${...}` replacements). Its values are also the defaults of the
   * inputs they name (see {@link PromptyInput.default}).
   */
  sample?: unknown;
  /** Declared `outputs`, normalized like inputs; empty when the file declares none. */
  outputs: PromptyInput[];
  /** `outputs` as a zod object schema, when the file declares any. */
  outputSchema?: z.ZodObject;
  /** Pass-through agentport fields. */
  fields: PromptyFields;
  /** Informational Prompty fields (`authors`, `tags`, `version`, `metadata`) when present. */
  metadata: Record<string, unknown>;
  /** Non-fatal problems (unknown fields, ignored content) as `file:line: field: message` texts. */
  warnings: string[];
  /** The same warnings as records (line, field, message), e.g. to map to registry issues. */
  warningIssues: PromptyIssue[];
  /** The template engine of the body (`template` field, or detected when absent). */
  engine: PromptyEngine;
  /**
   * Ids of body `tools:` entries that nothing implements; they are left out of every render. Set
   * by the registry, which knows the registered tools.
   */
  skipTools?: ReadonlySet<string>;
  /** The markdown body, with `${env:}` and `${file:}` already substituted. */
  template: string;
  /** 1-based line in `file` of each line of `template` (for error messages). */
  templateSourceLines: number[];
}
