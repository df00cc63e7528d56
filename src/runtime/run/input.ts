/**
 * Validates a call's arguments against the prompt's input schema (its
 * `requiredSchema`, or `{ message: string }`) and builds the user message.
 * Arguments are data: they only ever become the content of a user message.
 */
import { z } from 'zod';
import { describeZodIssues, fieldPath } from '../../definitions/issues.js';
import type { PromptDefinition } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import { RESERVED_ARGUMENT } from '../../registry/references.js';

const messageSchema = z.object({ message: z.string({ error: 'message must be a string' }) });

export interface PreparedInput {
  /** The validated arguments (defaults applied). */
  args: Record<string, unknown>;
  /** Text of the initial user message. */
  userMessage: string;
}

export function prepareInput(prompt: PromptDefinition, raw: Record<string, unknown>): PreparedInput {
  const args = { ...raw };
  delete args[RESERVED_ARGUMENT];
  const schema = prompt.requiredSchema ?? messageSchema;
  const parsed = schema.safeParse(args);
  if (!parsed.success) {
    throw new AgentportError('INVALID_ARGUMENTS', `invalid arguments for "${prompt.name}": ${describeZodIssues(parsed.error.issues)}`, {
      fields: parsed.error.issues.map((issue) => fieldPath(issue.path)),
    });
  }
  const value = parsed.data as Record<string, unknown>;
  const userMessage = prompt.requiredSchema ? JSON.stringify(value) : String(value.message);
  return { args: value, userMessage };
}
