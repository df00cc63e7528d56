/**
 * Exposed prompts and agents as MCP prompts, so a host can offer them as
 * slash commands. `prompts/list` is derived from the tool catalogue (the
 * arguments are the top-level properties of the tool's input schema, which
 * was converted once); `prompts/get` validates the arguments like a call
 * does and returns what a run would start with, rendered by the runtime's
 * own `openTurn` (a `.prompty` template included), redacted.
 */
import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt, type PromptArgument } from '@modelcontextprotocol/server';
import type { JsonSchema } from '../definitions/jsonSchema.js';
import { errorMessage, isAgentportError } from '../errors.js';
import { log, redact } from '../log.js';
import { RESERVED_ARGUMENT } from '../definitions/reservedArgument.js';
import { secretNamesOf } from '../registry/secretNames.js';
import type { LoadedPrompt, Registry } from '../registry/types.js';
import type { Redactor } from '../runtime/variables/secrets.js';
import { promptMessages } from './promptMessages.js';
import type { ExposedTool } from './toolCatalog.js';

interface CatalogEntry {
  prompt: Prompt;
  tool: ExposedTool;
  properties: Record<string, JsonSchema>;
  required: readonly string[];
}

export class PromptCatalog {
  private entries: Map<string, CatalogEntry> | undefined;
  private secrets: Promise<Redactor> | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly tools: readonly ExposedTool[],
  ) {}

  /** In the tool catalogue's order (by name). */
  list(): Prompt[] {
    return [...this.catalog().values()].map((entry) => entry.prompt);
  }

  /** The JSON Schema of one argument of one prompt (for completions); throws -32602 for an unknown prompt. */
  argumentSchema(promptName: string, argument: string): JsonSchema | undefined {
    return this.entry(promptName).properties[argument];
  }

  async get(name: string, given: Record<string, string> = {}): Promise<GetPromptResult> {
    const entry = this.entry(name);
    // Hosts send an optional field the person left blank as "": it means no value, not an empty one.
    const raw = Object.fromEntries(Object.entries(given).filter(([key, value]) => value !== '' || entry.required.includes(key)));
    const missing = entry.required.filter((key) => raw[key] === undefined);
    if (missing.length) {
      throw invalid(
        `prompt "${name}" needs the argument${missing.length === 1 ? '' : 's'} ${missing.map((key) => `"${key}"`).join(', ')}`,
        { missing },
      );
    }
    const unknown = Object.keys(raw).filter((key) => !(key in entry.properties));
    if (unknown.length) {
      throw invalid(`prompt "${name}" has no argument${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => `"${key}"`).join(', ')}`, {
        unknown,
      });
    }
    const args = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, fromText(value, entry.properties[key]!)]));
    await this.prepare(name);
    const prompt = this.promptOf(entry.tool);
    // Loaded on the first prompts/get: listing never pays for the runtime.
    const [{ prepareInput }, { openTurn }, { toWireMessages }] = await Promise.all([
      import('../runtime/run/input.js'),
      import('../runtime/run/openTurn.js'),
      import('../models/wire.js'),
    ]);
    let opened;
    try {
      const input = prepareInput(prompt.definition, args);
      opened = await openTurn(prompt, input.args, input.userMessage);
    } catch (error) {
      const redactor = await this.redactor();
      const message = redactor.text(redact(errorMessage(error)));
      if (isAgentportError(error) && error.code === 'INVALID_ARGUMENTS') throw invalid(message, error.data);
      throw new ProtocolError(ProtocolErrorCode.InternalError, message);
    }
    // The turn in the wire shape too (the runtime's converter), so one mapping makes MCP messages of both.
    const wire = [
      ...opened.preamble,
      ...toWireMessages(opened.turn, { recentImageThreshold: Number.POSITIVE_INFINITY, includeReasoning: false }),
    ];
    const redactor = await this.redactor();
    return { description: entry.prompt.description ?? '', messages: deepRedact(redactor.deep(promptMessages(wire))) };
  }

  private entry(name: string): CatalogEntry {
    const entry = this.catalog().get(name);
    if (!entry) throw invalid(`Unknown prompt: ${name}`);
    return entry;
  }

  private catalog(): Map<string, CatalogEntry> {
    if (this.entries) return this.entries;
    const entries = new Map<string, CatalogEntry>();
    for (const tool of this.tools) {
      try {
        entries.set(tool.name, catalogEntry(tool));
      } catch (error) {
        // A start-up cache line damaged in place (cacheFile.ts removes the file, so the next start loads the folder
        // in full): the other prompts stay listed, and the tool stays callable by name.
        log.warn(`prompts: ${tool.name} left out of the list: ${errorMessage(error)}`);
      }
    }
    return (this.entries = entries);
  }

  /** An agent starts with its side A prompt, as a run does. */
  private promptOf(tool: ExposedTool): LoadedPrompt {
    const agent = tool.kind === 'agent' ? this.registry.agents.get(tool.name) : undefined;
    const prompt = this.registry.prompts.get(agent ? agent.definition.sideA.prompt : tool.name);
    if (!prompt) throw new ProtocolError(ProtocolErrorCode.InternalError, `prompt "${tool.name}" is not loaded`);
    return prompt;
  }

  /** A lazily loaded registry imports the prompt (an agent's side prompts) first. */
  private async prepare(name: string): Promise<void> {
    try {
      await this.registry.lazy?.prepare([name]);
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, (await this.redactor()).text(redact(errorMessage(error))));
    }
  }

  private redactor(): Promise<Redactor> {
    return (this.secrets ??= knownSecrets(this.registry, process.env));
  }
}

function catalogEntry(tool: ExposedTool): CatalogEntry {
  const properties = { ...(tool.inputSchema.properties as Record<string, JsonSchema> | undefined) };
  // thread_id continues a conversation: a tool-call concern, not something a prompt starts with.
  delete properties[RESERVED_ARGUMENT];
  const required = ((tool.inputSchema.required as string[] | undefined) ?? []).filter((key) => key in properties);
  const args = Object.entries(properties).map(([name, schema]): PromptArgument => {
    const description = [typeof schema.description === 'string' ? schema.description : '', textHint(schema)].filter(Boolean).join(' ');
    return {
      name,
      ...(typeof schema.title === 'string' ? { title: schema.title } : {}),
      ...(description ? { description } : {}),
      required: required.includes(name),
    };
  });
  return {
    prompt: { name: tool.name, title: tool.title, description: tool.description, arguments: args },
    tool,
    properties,
    required,
  };
}

/** Prompt arguments are text: how to write a value that is not a string. */
function textHint(schema: JsonSchema): string {
  if (admitsString(schema)) return '';
  const type: unknown = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object') return '(a JSON object)';
  if (type === 'array') return '(a JSON array)';
  if (type === 'number' || type === 'integer' || type === 'boolean') return `(${type})`;
  return '(JSON)';
}

/**
 * Prompt arguments arrive as strings: a value whose schema admits a string
 * is kept as it is; any other (a number, a boolean, an object) is read as
 * JSON, or left as text for validation to report.
 */
function fromText(value: string, schema: JsonSchema): unknown {
  if (admitsString(schema)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function admitsString(schema: JsonSchema): boolean {
  const type = schema.type;
  if (type === 'string' || (Array.isArray(type) && type.includes('string'))) return true;
  if (Array.isArray(schema.enum)) return schema.enum.some((v) => typeof v === 'string');
  if ('const' in schema) return typeof schema.const === 'string';
  const union = [schema.anyOf, schema.oneOf].find(Array.isArray) as JsonSchema[] | undefined;
  if (union) return union.some(admitsString);
  // No type at all accepts anything, text included.
  return type === undefined;
}

function invalid(message: string, data?: Record<string, unknown>): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message, data);
}

/**
 * The values a rendered prompt must never show. Variables are not rendered
 * into prompt text by the runtime, but a `.prompty` file's `${env:NAME}` is
 * resolved when the folder loads, so a secret could sit in a system text:
 * the declared secret variables, the models' API keys and agentport's own
 * keys are replaced, like every secret this process has already seen.
 */
async function knownSecrets(registry: Registry, env: Readonly<Record<string, string | undefined>>): Promise<Redactor> {
  const { Redactor } = await import('../runtime/variables/secrets.js');
  const redactor = new Redactor();
  const secrets = secretNamesOf(registry);
  const names = new Set([
    'OPENAI_API_KEY',
    'AGENTPORT_TOKEN',
    'AGENTPORT_SECRET_KEY',
    'AGENTPORT_DATABASE_URL',
    ...secrets.apiKeyEnvs,
    ...secrets.variables,
  ]);
  for (const name of names) {
    const value = env[name];
    if (value) redactor.add(value);
  }
  return redactor;
}

/** Every string through the process-wide redaction (secrets runs have learned since). */
function deepRedact<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(deepRedact) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, deepRedact(inner)])) as T;
  return value;
}
