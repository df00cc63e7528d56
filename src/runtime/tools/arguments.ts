/** The argument text a model sent with a tool call, as an object. */
import { AgentportError, errorMessage } from '../../errors.js';

/** Parses the model's argument text; anything but a JSON object is an INVALID_ARGUMENTS error. */
export function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentportError('INVALID_ARGUMENTS', `arguments are not valid JSON (${errorMessage(error)})`);
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new AgentportError('INVALID_ARGUMENTS', 'arguments must be a JSON object');
}

/** The arguments as far as they parse: hooks see `{}` for text that is not a JSON object. */
export function argumentsOrEmpty(text: string): Record<string, unknown> {
  try {
    return parseArguments(text);
  } catch {
    return {};
  }
}
