/**
 * Validates a call's arguments against the prompt's input schema (its
 * `requiredSchema`, or `{ message: string }`) and builds the user message.
 * Arguments are data: they only ever become the content of a user message.
 */
import { z } from 'zod';
import { describeZodIssues, fieldPath } from '../../definitions/issues.js';
import { quoteKeys, unknownKeys } from '../../definitions/unknownKeys.js';
import type { PromptDefinition } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import { RESERVED_ARGUMENT } from '../../definitions/reservedArgument.js';

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
  // zod drops keys it does not know; the published schema refuses them, and so does the call.
  const unknown = unknownKeys(schema, args);
  if (!parsed.success || unknown.length > 0) {
    // A strict object's extra keys are zod's issue too: said once, as undeclared arguments.
    const listed = new Set(unknown);
    const issues = parsed.success
      ? []
      : parsed.error.issues.filter(
          (issue) => !(issue.code === 'unrecognized_keys' && issue.keys.every((key) => listed.has(fieldPath([...issue.path, key])))),
        );
    const problems = [
      ...(issues.length > 0 ? [describeZodIssues(issues)] : []),
      ...(unknown.length > 0 ? [`no argument ${quoteKeys(unknown)} is declared`] : []),
    ];
    throw new AgentportError('INVALID_ARGUMENTS', `invalid arguments for "${prompt.name}": ${problems.join('; ')}`, {
      fields: [...issues.map((issue) => fieldPath(issue.path)), ...unknown],
    });
  }
  const value = parsed.data as Record<string, unknown>;
  const userMessage = prompt.requiredSchema ? JSON.stringify(value) : String(value.message);
  return { args: value, userMessage };
}
