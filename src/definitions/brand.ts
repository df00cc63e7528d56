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
  // Types stop this in TypeScript; a JavaScript definition (or a cast) would otherwise fail with defineProperty's message.
  const given: unknown = definition;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    const what = given === null ? 'null' : Array.isArray(given) ? 'an array' : typeof given;
    throw new AgentportError('DEFINITION_INVALID', `${DEFINE_FUNCTION[kind]}() takes the definition as an object; it was given ${what}`);
  }
  Object.defineProperty(definition, DEFINITION_KIND, { value: kind, enumerable: false });
  return definition;
}

export function kindOf(value: unknown): DefinitionKind | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kind = (value as { [DEFINITION_KIND]?: unknown })[DEFINITION_KIND];
  return typeof kind === 'string' ? (kind as DefinitionKind) : undefined;
}
