/**
 * Validates a call's arguments against the prompt's input schema (its
 * `requiredSchema`, or `{ message: string }`) and builds the user message.
 * Arguments are data: they only ever become the content of a user message.
 */
import { z } from 'zod';
import { fieldPath } from '../definitions/issues.js';
import type { PromptDefinition } from '../definitions/types.js';
import { AgentportError } from '../errors.js';

/** Argument names agentport itself understands on every exposed tool. */
export const RESERVED_ARGUMENTS = ['thread_id'] as const;

const messageSchema = z.object({ message: z.string({ error: 'message must be a string' }) });

export interface PreparedInput {
  /** The validated arguments (defaults applied). */
  args: Record<string, unknown>;
  /** Text of the initial user message. */
  userMessage: string;
}

export function prepareInput(prompt: PromptDefinition, raw: Record<string, unknown>): PreparedInput {
  const args = { ...raw };
  for (const reserved of RESERVED_ARGUMENTS) delete args[reserved];
  const schema = prompt.requiredSchema ?? messageSchema;
  const parsed = schema.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = fieldPath(issue.path);
      return field ? `${field}: ${issue.message}` : issue.message;
    });
    throw new AgentportError('INVALID_ARGUMENTS', `invalid arguments for "${prompt.name}": ${problems.join('; ')}`, {
      fields: parsed.error.issues.map((issue) => fieldPath(issue.path)),
    });
  }
  const value = parsed.data as Record<string, unknown>;
  const userMessage = prompt.requiredSchema ? JSON.stringify(value) : String(value.message);
  return { args: value, userMessage };
}
