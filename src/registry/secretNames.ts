/**
 * The environment variables whose values are secrets for a loaded folder:
 * declared `secret` variables and the models' API key variables. A lazily
 * loaded registry knows them from its start-up cache, so hiding them never
 * imports every definition.
 */
import type { Registry, SecretNames } from './types.js';

export function secretNamesOf(registry: Registry): SecretNames {
  if (registry.lazy) return registry.lazy.secretNames;
  const declared = [...registry.prompts.values(), ...registry.agents.values(), ...registry.tools.values()].flatMap(
    (entry) => entry.definition.variables ?? [],
  );
  const apiKeyEnvs = [...registry.models.values()].flatMap((model) => (model.definition.apiKeyEnv ? [model.definition.apiKeyEnv] : []));
  return {
    variables: [...new Set(declared.filter((variable) => variable.type === 'secret').map((variable) => variable.name))],
    apiKeyEnvs: [...new Set(apiKeyEnvs)],
  };
}
