/**
 * Definitions carry a hidden marker naming their kind, so the registry can tell
 * a definition from any other export. `Symbol.for` keeps the marker the same
 * when a definition file and agentport load different copies of this module.
 */
import { AgentportError } from '../errors.js';

const DEFINITION_KIND = Symbol.for('agentport.definitionKind');

export type DefinitionKind = 'prompt' | 'tool' | 'model' | 'hook' | 'agent';

const DEFINE_FUNCTION: Record<DefinitionKind, string> = {
  prompt: 'definePrompt',
  tool: 'defineTool',
  model: 'defineModel',
  hook: 'defineHook',
  agent: 'defineAgent',
};

export function brand<T extends object>(definition: T, kind: DefinitionKind): T {
  // Types stop most of this in TypeScript; a JavaScript definition (or a cast) would otherwise fail with
  // defineProperty's own message, which names neither the function nor the problem.
  const given: unknown = definition;
  const refuse = (problem: string) => new AgentportError('DEFINITION_INVALID', `${DEFINE_FUNCTION[kind]}() ${problem}`);
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw refuse(`takes the definition as an object; it was given ${describeValue(given)}`);
  }
  const marked = kindOf(given);
  if (marked === kind) return definition;
  if (marked !== undefined) throw refuse(`was given what ${DEFINE_FUNCTION[marked]}() made: a definition has one kind`);
  if (!Object.isExtensible(given)) throw refuse('cannot mark a frozen or sealed object: pass the definition before freezing it');
  Object.defineProperty(definition, DEFINITION_KIND, { value: kind, enumerable: false });
  return definition;
}

/** What a value is, with its article: "a string", "an array", "null". */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`;
}

export function kindOf(value: unknown): DefinitionKind | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kind = (value as { [DEFINITION_KIND]?: unknown })[DEFINITION_KIND];
  return typeof kind === 'string' ? (kind as DefinitionKind) : undefined;
}
