/**
 * A prompt with a `responseSchema` answers in JSON of that shape: the run's
 * final text is parsed and checked here. An answer that is not such JSON is
 * the run's error (RESPONSE_INVALID), naming what is wrong, with the text kept.
 */
import type { ToolArgs } from '../../definitions/types.js';
import { AgentportError, type ErrorInfo } from '../../errors.js';

export function parseResponse(schema: ToolArgs, text: string): { data: Record<string, unknown> } | { error: ErrorInfo } {
  // Some models wrap JSON in a Markdown code fence even when asked for JSON.
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : text);
  } catch (error) {
    return invalid(`the answer is not JSON (${error instanceof Error ? error.message : String(error)})`, text);
  }
  const checked = schema.safeParse(value);
  if (!checked.success) {
    const problems = checked.error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'the answer'}: ${issue.message}`);
    return invalid(`the answer does not match the prompt's responseSchema: ${problems.join('; ')}`, text);
  }
  return { data: checked.data };
}

function invalid(message: string, text: string): { error: ErrorInfo } {
  return {
    error: new AgentportError('RESPONSE_INVALID', message, { text: text.length > 2000 ? `${text.slice(0, 2000)}...` : text }).info(),
  };
}
