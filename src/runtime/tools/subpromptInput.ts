/**
 * Turns the arguments a model passed to a sub-prompt into its initial user
 * message (and attachment paths), validating them against its schema first.
 * Invalid arguments throw INVALID_ARGUMENTS with a message the model can act on.
 */
import { describeZodIssues } from '../../definitions/issues.js';
import { AgentportError, errorMessage } from '../../errors.js';
import { parseArguments } from './arguments.js';
import type { LoadedPrompt } from '../../registry/types.js';

export interface SubpromptInput {
  args: Record<string, unknown>;
  message: string;
  attachmentPaths: string[];
}

/** How a called prompt (or subagent) takes its first message and files from the arguments. */
export interface InputMapping {
  initUserMessageProperty?: string | undefined;
  initAttachmentsProperty?: string | undefined;
}

export function subpromptInput(tool: { name: string; prompt: LoadedPrompt; config: InputMapping }, argumentText: string): SubpromptInput {
  const invalid = (why: string) => new AgentportError('INVALID_ARGUMENTS', `Invalid arguments for ${tool.name}: ${why}`);
  let args: Record<string, unknown>;
  try {
    args = parseArguments(argumentText);
  } catch (error) {
    throw invalid(errorMessage(error));
  }
  const schema = tool.prompt.definition.requiredSchema;
  if (schema) {
    const validated = schema.safeParse(args);
    if (!validated.success) throw invalid(describeZodIssues(validated.error.issues));
    args = validated.data;
  } else if (typeof args.message !== 'string' && !tool.config.initUserMessageProperty) {
    throw invalid('message: expected a string');
  }

  const property = tool.config.initUserMessageProperty;
  let message: string;
  if (property) {
    const value = args[property];
    if (value === undefined) throw invalid(`${property} is required`);
    message = typeof value === 'string' ? value : JSON.stringify(value);
  } else {
    message = schema ? JSON.stringify(args) : String(args.message);
  }

  const attachmentProperty = tool.config.initAttachmentsProperty;
  const raw = attachmentProperty ? args[attachmentProperty] : undefined;
  const attachmentPaths = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(attachmentPath);
  return { args, message, attachmentPaths };
}

/** A path as given; any other value as its JSON text (which names no file). */
function attachmentPath(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
