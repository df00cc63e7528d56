/**
 * Turns the arguments a model passed to a sub-prompt into its initial user
 * message (and attachment paths), validating them against its schema first.
 */
import { describeZodIssues } from '../definitions/issues.js';
import { parseArguments } from './executeTool.js';
import type { OfferedSubprompt } from './toolset.js';

export type SubpromptInput =
  | { ok: true; args: Record<string, unknown>; message: string; attachmentPaths: string[] }
  | { ok: false; error: string };

export function subpromptInput(tool: OfferedSubprompt, argumentText: string): SubpromptInput {
  const parsed = parseArguments(argumentText);
  if (!parsed.ok) return { ok: false, error: `Invalid arguments for ${tool.name}: ${parsed.error}` };
  const schema = tool.prompt.definition.requiredSchema;
  let args = parsed.value;
  if (schema) {
    const validated = schema.safeParse(args);
    if (!validated.success) return { ok: false, error: `Invalid arguments for ${tool.name}: ${describeZodIssues(validated.error.issues)}` };
    args = validated.data as Record<string, unknown>;
  } else if (typeof args.message !== 'string' && !tool.config.initUserMessageProperty) {
    return { ok: false, error: `Invalid arguments for ${tool.name}: message: expected a string` };
  }

  const property = tool.config.initUserMessageProperty;
  let message: string;
  if (property) {
    const value = args[property];
    if (value === undefined) return { ok: false, error: `Invalid arguments for ${tool.name}: ${property} is required` };
    message = typeof value === 'string' ? value : JSON.stringify(value);
  } else {
    message = schema ? JSON.stringify(args) : String(args.message);
  }

  const attachmentProperty = tool.config.initAttachmentsProperty;
  const raw = attachmentProperty ? args[attachmentProperty] : undefined;
  const attachmentPaths = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  return { ok: true, args, message, attachmentPaths };
}
