/**
 * The secret variables a folder declares (prompts, agents, tools) whose
 * values are in the server's environment: known to the log redactor from the
 * start, before any run resolves them.
 */
import type { VariableDefinition } from '../../definitions/types.js';
import { hideInLogs } from '../../log.js';
import type { Registry } from '../../registry/types.js';

export function hideDeclaredSecrets(registry: Registry, env: Readonly<Record<string, string | undefined>>): void {
  const declared: Array<VariableDefinition[] | undefined> = [
    ...[...registry.prompts.values()].map((p) => p.definition.variables),
    ...[...registry.agents.values()].map((a) => a.definition.variables),
    ...[...registry.tools.values()].map((t) => t.definition.variables),
  ];
  for (const variables of declared) {
    for (const variable of variables ?? []) {
      const value = env[variable.name];
      if (variable.type === 'secret' && value && value.length >= 4) hideInLogs(value);
    }
  }
}
