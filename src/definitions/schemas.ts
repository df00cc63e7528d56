/**
 * zod schemas for the definitions themselves (spec §9 validation). They check
 * structure only; cross-field rules (validate.ts) and cross-references (a
 * prompt's model exists, ...; src/registry/references.ts) are checked apart.
 *
 * Objects are strict: a key a schema does not know becomes an
 * `unrecognized_keys` issue, which validate.ts reports as a warning (likely a
 * typo) rather than an error. The one exception is a tool config in a prompt's
 * `tools`: which keys it takes depends on what the name refers to (a tool, a
 * prompt or an agent), so the registry checks its keys once everything is
 * loaded (see {@link TOOL_CONFIG_KEYS}).
 */
import { z } from 'zod';
import type { DefinitionKind } from './brand.js';
import type { HookName } from './types.js';
import { fieldsJsonCannotCarry, isZodObject } from './zodShape.js';

/** Keys of each kind of tool config, by what the config's `name` refers to. */
export const TOOL_CONFIG_KEYS = {
  /** `ToolConfig`: a function tool. */
  tool: ['name', 'env', 'options', 'timeoutMs'],
  /** `SubpromptConfig`: a prompt used as a tool (`env`: defaults for the child run, below its own values). */
  prompt: ['name', 'env', 'includeTextResponse', 'includeToolCalls', 'includeErrors', 'initUserMessageProperty', 'initAttachmentsProperty'],
  /** `SubagentToolConfig`: an agent used as a tool. */
  agent: [
    'name',
    'env',
    'blocking',
    'initUserMessageProperty',
    'initAttachmentsProperty',
    'initAgentNameProperty',
    'immediate',
    'optional',
    'resumable',
  ],
} as const satisfies Record<'tool' | 'prompt' | 'agent', readonly string[]>;

/** Fields that only mean something for a dual_ai agent run as a subagent (an ai_human agent ignores them, with a warning). */
export const SUBAGENT_ONLY_FIELDS = ['blocking', 'immediate', 'optional', 'resumable', 'initAgentNameProperty'] as const;

/** Every hook point, in the order of `HookSignatures` (src/definitions/types.ts). */
export const HOOK_NAMES = [
  'filter_messages',
  'prefilter_llm_history',
  'after_system_message',
  'before_create_message',
  'after_create_message',
  'before_update_message',
  'after_update_message',
  'before_store_tool_result',
  'after_tool_call_success',
  'after_tool_call_failure',
  'after_thread_created',
  'after_subagent_created',
] as const satisfies readonly HookName[];

/**
 * Compile-time check that HOOK_NAMES lists every key of HookSignatures: a hook
 * added to the type but not here makes this alias fail to compile.
 */
type MustBeNever<T extends never> = T;
type _UnlistedHookNames = MustBeNever<Exclude<HookName, (typeof HOOK_NAMES)[number]>>;

/**
 * Deprecated side fields and the field each one is an alias of. The registry
 * rewrites them to the new name (src/definitions/normalize.ts), so the runtime
 * only ever sees the new names.
 */
export const DEPRECATED_SIDE_FIELDS = {
  endSessionTool: 'sessionStop',
  failSessionTool: 'sessionFail',
  statusTool: 'sessionStatus',
  endConversationTool: 'sessionStop',
} as const;

const nonEmpty = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`);

const zodObjectSchema = (what: string) =>
  z
    .custom<z.ZodObject<z.ZodRawShape>>((v) => isZodObject(v), `${what} must be a zod object schema (z.object({...}))`)
    .superRefine((schema, ctx) => {
      // Arguments and answers arrive as JSON: such a field could never be given a value.
      for (const field of fieldsJsonCannotCarry(schema)) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} field ${field.path} is ${field.what}, which JSON cannot carry: no caller or model could give it a value (take a string or a number, e.g. z.iso.datetime() for a date, and convert it where it is used)`,
        });
      }
    });

/** The schema of each kind of definition, by kind. */
export type DefinitionSchemas = Record<DefinitionKind, z.ZodType>;

let built: DefinitionSchemas | undefined;

/**
 * The schemas, built on first use: building them takes about 10 ms, which a server starting from its
 * start-up cache does not spend until a definition is first loaded.
 */
export function definitionSchemas(): DefinitionSchemas {
  return (built ??= buildSchemas());
}

function buildSchemas(): DefinitionSchemas {
  const stringRecord = z.record(z.string(), z.string());

  const positiveInt = z.number().int().positive();

  const variable = z.strictObject({
    name: nonEmpty('variable name'),
    type: z.enum(['text', 'secret']),
    required: z.boolean(),
    scoped: z.boolean().optional(),
    description: z.string(),
  });

  const promptPart = z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), content: z.string() }),
    z.strictObject({ type: z.literal('include'), prompt: nonEmpty('include prompt name') }),
  ]);

  // ---------------------------------------------------------------- tool configs

  /**
   * A `{ name, ... }` entry of a prompt's `tools`: every key of every kind,
   * type-checked. Loose on purpose: unknown keys are reported by the registry,
   * which knows the kind.
   */
  const toolConfig = z.looseObject({
    name: nonEmpty('tool name'),
    // ToolConfig
    env: stringRecord.optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    timeoutMs: z.number().int().positive().optional(),
    // SubpromptConfig (and the init* fields of SubagentToolConfig)
    includeTextResponse: z.boolean().optional(),
    includeToolCalls: z.boolean().optional(),
    includeErrors: z.boolean().optional(),
    initUserMessageProperty: z.string().optional(),
    initAttachmentsProperty: z.string().optional(),
    // SubagentToolConfig
    initAgentNameProperty: z.string().optional(),
    blocking: z.boolean().optional(),
    immediate: z
      .union([
        z.boolean(),
        z.strictObject({
          nameEnv: z.string().optional(),
          descriptionEnv: z.string().optional(),
          scopedEnv: z.array(z.string()).optional(),
        }),
      ])
      .optional(),
    optional: z.string().optional(),
    resumable: z
      .union([
        z.literal(false),
        z.strictObject({
          receives_messages: z.enum(['side_a', 'side_b']),
          maxInstances: positiveInt.optional(),
          parentCommunication: z.enum(['implicit', 'explicit']).optional(),
        }),
      ])
      .optional(),
  });

  const toolReference = z.union([nonEmpty('tool name'), toolConfig]);

  // ---------------------------------------------------------------- prompts, tools, models

  const exposure = {
    exposeAsTool: z.boolean().optional(),
    title: z.string().optional(),
    alwaysLoad: z.boolean().optional(),
    defer: z.boolean().optional(),
    taskSupport: z.enum(['forbidden', 'optional', 'required']).optional(),
    icon: nonEmpty('icon').optional(),
    annotations: z
      .strictObject({
        title: z.string().optional(),
        readOnlyHint: z.boolean().optional(),
        destructiveHint: z.boolean().optional(),
        idempotentHint: z.boolean().optional(),
        openWorldHint: z.boolean().optional(),
      })
      .optional(),
  };

  const prompt = z.strictObject({
    name: nonEmpty('name'),
    toolDescription: nonEmpty('toolDescription'),
    prompt: z.union([z.string(), z.array(promptPart)], {
      error: 'prompt must be a string or an array of {type:"text",content} / {type:"include",prompt} parts',
    }),
    model: nonEmpty('model'),
    includeChat: z.boolean().optional(),
    includePastTools: z.boolean().optional(),
    parallelToolCalls: z.boolean().optional(),
    toolChoice: z.enum(['auto', 'none', 'required']).optional(),
    requiredSchema: zodObjectSchema('requiredSchema').optional(),
    responseSchema: zodObjectSchema('responseSchema').optional(),
    tools: z.array(toolReference).optional(),
    variables: z.array(variable).optional(),
    env: stringRecord.optional(),
    reasoning: z
      .strictObject({
        effort: z.enum(['low', 'medium', 'high']).optional(),
        maxTokens: positiveInt.optional(),
        exclude: z.boolean().optional(),
        include: z.boolean().optional(),
      })
      .optional(),
    recentImageThreshold: z
      .number()
      .int('recentImageThreshold must be a positive integer')
      .positive('recentImageThreshold must be a positive integer')
      .optional(),
    hooks: z.array(nonEmpty('hook id')).optional(),
    ...exposure,
  });

  const tool = z.strictObject({
    description: nonEmpty('description'),
    args: zodObjectSchema('args').optional(),
    execute: z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', 'execute must be a function'),
    tenvs: zodObjectSchema('tenvs').optional(),
    variables: z.array(variable).optional(),
    defer: z.boolean().optional(),
    alwaysLoad: z.boolean().optional(),
    timeoutMs: z.number().int().positive().optional(),
  });

  const providerObject = z.custom<{ complete: unknown }>(
    (v) => typeof v === 'object' && v !== null && typeof (v as { complete?: unknown }).complete === 'function',
    'provider must be "openai" or an object with a complete() method',
  );

  const model = z.strictObject({
    name: nonEmpty('name'),
    provider: z.union([z.literal('openai'), providerObject], {
      error: 'provider must be "openai" or an object with a complete() method',
    }),
    model: nonEmpty('model'),
    baseURL: z.url().optional(),
    apiKeyEnv: nonEmpty('apiKeyEnv').optional(),
    fallbacks: z.array(nonEmpty('fallback model name')).optional(),
    temperature: z.number().optional(),
    maxTokens: positiveInt.optional(),
    timeoutMs: positiveInt.optional(),
    maxRetries: z.number().int().min(0).optional(),
    reasoningStyle: z.enum(['openai', 'openrouter']).optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    inputPrice: z.number().min(0).optional(),
    outputPrice: z.number().min(0).optional(),
    cachedPrice: z.number().min(0).optional(),
  });

  // ---------------------------------------------------------------- hooks

  const hook = z.strictObject({
    id: nonEmpty('id'),
    hook: z.enum(HOOK_NAMES),
    execute: z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', 'execute must be a function'),
  });

  // ---------------------------------------------------------------- agents

  const sessionToolBinding = z.union([
    nonEmpty('session tool name'),
    z.strictObject({
      name: nonEmpty('session tool name'),
      messageProperty: z.string().optional(),
      attachmentsProperty: z.string().optional(),
    }),
  ]);

  const agentSideSchema = z.strictObject({
    prompt: nonEmpty('prompt'),
    label: z.string().optional(),
    stopOnResponse: z.boolean().optional(),
    stopTool: nonEmpty('stopTool').optional(),
    stopToolResponseProperty: nonEmpty('stopToolResponseProperty').optional(),
    maxSteps: positiveInt.optional(),
    sessionStop: sessionToolBinding.optional(),
    sessionFail: sessionToolBinding.optional(),
    sessionStatus: sessionToolBinding.optional(),
    // Deprecated aliases, see DEPRECATED_SIDE_FIELDS.
    endSessionTool: nonEmpty('endSessionTool').optional(),
    failSessionTool: nonEmpty('failSessionTool').optional(),
    statusTool: nonEmpty('statusTool').optional(),
    endConversationTool: nonEmpty('endConversationTool').optional(),
  });

  /** Structure only; the rules between fields (a dual_ai agent needs sideB, ...) are in validate.ts. */
  const agent = z.strictObject({
    name: nonEmpty('name'),
    type: z.enum(['ai_human', 'dual_ai']).optional(),
    toolDescription: nonEmpty('toolDescription').optional(),
    description: z.string().optional(),
    sideA: agentSideSchema,
    sideB: agentSideSchema.optional(),
    maxSessionTurns: positiveInt.optional(),
    hooks: z.array(nonEmpty('hook id')).optional(),
    env: stringRecord.optional(),
    tenvs: stringRecord.optional(),
    variables: z.array(variable).optional(),
    tags: z.array(z.string()).optional(),
    packageName: z.string().optional(),
    version: z.string().optional(),
    author: z.string().optional(),
    license: z.string().optional(),
    ...exposure,
  });

  return { prompt, tool, model, hook, agent };
}
