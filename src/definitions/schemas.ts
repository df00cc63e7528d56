/**
 * zod schemas for the definitions themselves (spec §9 validation). They check
 * structure only; cross-references (a prompt's model exists, ...) are checked
 * by the registry once everything is loaded.
 */
import { z } from 'zod';
import { isZodObject } from './zodShape.js';

const nonEmpty = (what: string) => z.string({ error: `${what} must be a string` }).trim().min(1, `${what} must not be empty`);

const zodObjectSchema = (what: string) =>
  z.custom<z.ZodObject<z.ZodRawShape>>((v) => isZodObject(v), `${what} must be a zod object schema (z.object({...}))`);

const stringRecord = z.record(z.string(), z.string());

const variable = z.object({
  name: nonEmpty('variable name'),
  type: z.enum(['text', 'secret']),
  required: z.boolean(),
  scoped: z.boolean().optional(),
  description: z.string(),
});

const promptPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), content: z.string() }),
  z.object({ type: z.literal('include'), prompt: nonEmpty('include prompt name') }),
]);

const toolReference = z.union([
  nonEmpty('tool name'),
  z.looseObject({
    name: nonEmpty('tool name'),
    env: stringRecord.optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    includeTextResponse: z.boolean().optional(),
    includeToolCalls: z.boolean().optional(),
    includeErrors: z.boolean().optional(),
    initUserMessageProperty: z.string().optional(),
    initAttachmentsProperty: z.string().optional(),
    initAgentNameProperty: z.string().optional(),
    blocking: z.boolean().optional(),
    optional: z.string().optional(),
  }),
]);

const exposure = {
  exposeAsTool: z.boolean().optional(),
  title: z.string().optional(),
  alwaysLoad: z.boolean().optional(),
  defer: z.boolean().optional(),
};

export const promptDefinitionSchema = z.object({
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
  tools: z.array(toolReference).optional(),
  variables: z.array(variable).optional(),
  env: stringRecord.optional(),
  reasoning: z
    .object({
      effort: z.enum(['low', 'medium', 'high']).optional(),
      maxTokens: z.number().int().positive().optional(),
      exclude: z.boolean().optional(),
      include: z.boolean().optional(),
    })
    .optional(),
  recentImageThreshold: z.number().int('recentImageThreshold must be a positive integer').positive('recentImageThreshold must be a positive integer').optional(),
  hooks: z.array(nonEmpty('hook id')).optional(),
  ...exposure,
});

export const toolDefinitionSchema = z.object({
  description: nonEmpty('description'),
  args: zodObjectSchema('args').optional(),
  execute: z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', 'execute must be a function'),
  tenvs: zodObjectSchema('tenvs').optional(),
  variables: z.array(variable).optional(),
  defer: z.boolean().optional(),
  alwaysLoad: z.boolean().optional(),
});

const providerObject = z.custom<{ complete: unknown }>(
  (v) => typeof v === 'object' && v !== null && typeof (v as { complete?: unknown }).complete === 'function',
  'provider must be "openai" or an object with a complete() method',
);

export const modelDefinitionSchema = z.object({
  name: nonEmpty('name'),
  provider: z.union([z.literal('openai'), providerObject], {
    error: 'provider must be "openai" or an object with a complete() method',
  }),
  model: nonEmpty('model'),
  baseURL: z.url().optional(),
  apiKeyEnv: nonEmpty('apiKeyEnv').optional(),
  fallbacks: z.array(nonEmpty('fallback model name')).optional(),
  temperature: z.number().optional(),
  maxTokens: z.number().int().positive().optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxRetries: z.number().int().min(0).optional(),
  reasoningStyle: z.enum(['openai', 'openrouter']).optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const HOOK_NAMES = [
  'filter_messages',
  'prefilter_llm_history',
  'before_create_message',
  'after_create_message',
  'before_store_tool_result',
  'after_tool_call_success',
  'after_tool_call_failure',
  'after_thread_created',
] as const;

export const hookDefinitionSchema = z.object({
  id: nonEmpty('id'),
  hook: z.enum(HOOK_NAMES),
  execute: z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', 'execute must be a function'),
});

const agentSide = z.object({
  label: z.string().optional(),
  prompt: nonEmpty('prompt'),
  stopOnResponse: z.boolean().optional(),
  stopTool: z.string().optional(),
  stopToolResponseProperty: z.string().optional(),
  maxSteps: z.number().int().positive().optional(),
  endConversationTool: z.string().optional(),
});

export const agentDefinitionSchema = z
  .object({
    name: nonEmpty('name'),
    type: z.enum(['ai_human', 'dual_ai']).optional(),
    toolDescription: nonEmpty('toolDescription').optional(),
    sideA: agentSide,
    sideB: agentSide.optional(),
    maxSessionTurns: z.number().int().positive().optional(),
    hooks: z.array(nonEmpty('hook id')).optional(),
    env: stringRecord.optional(),
    variables: z.array(variable).optional(),
    tags: z.array(z.string()).optional(),
    ...exposure,
  })
  .superRefine((agent, ctx) => {
    if (agent.exposeAsTool && !agent.toolDescription) {
      ctx.addIssue({ code: 'custom', path: ['toolDescription'], message: 'an agent with exposeAsTool needs a toolDescription' });
    }
    if (agent.type === 'dual_ai' && !agent.sideB) {
      ctx.addIssue({ code: 'custom', path: ['sideB'], message: 'a dual_ai agent needs sideB' });
    }
  });
