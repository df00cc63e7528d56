/**
 * Definitions carry a hidden marker naming their kind, so the registry can tell
 * a definition from any other export. `Symbol.for` keeps the marker the same
 * when a definition file and agentport load different copies of this module.
 */
const DEFINITION_KIND = Symbol.for('agentport.definitionKind');

export type DefinitionKind = 'prompt' | 'tool' | 'model' | 'hook' | 'agent';

export function brand<T extends object>(definition: T, kind: DefinitionKind): T {
  Object.defineProperty(definition, DEFINITION_KIND, { value: kind, enumerable: false });
  return definition;
}

export function kindOf(value: unknown): DefinitionKind | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kind = (value as { [DEFINITION_KIND]?: unknown })[DEFINITION_KIND];
  return typeof kind === 'string' ? (kind as DefinitionKind) : undefined;
}
