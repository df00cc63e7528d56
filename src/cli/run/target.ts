/**
 * What `agentport run <name>` runs: a prompt or an agent of the registry, with
 * the input schema its MCP tool would publish. Exposed or not, anything in the
 * folder can be run from the terminal; an unknown name lists the exposed ones.
 */
import { suggestName } from '../../definitions/issues.js';
import { messageInputSchema, toJsonSchema, type JsonSchema } from '../../definitions/jsonSchema.js';
import type { Registry } from '../../registry/types.js';
import { CommandError } from '../context.js';

export interface RunTarget {
  name: string;
  kind: 'prompt' | 'agent';
  /** The input schema (the prompt's, or the agent's side A prompt's). */
  schema: JsonSchema;
}

export function resolveRunTarget(registry: Registry, name: string): RunTarget {
  const agent = registry.agents.get(name);
  const prompt = registry.prompts.get(agent ? agent.definition.sideA.prompt : name);
  if (!prompt) {
    const exposed = exposedNames(registry);
    const all = [...registry.prompts.keys(), ...registry.agents.keys()];
    const listed = exposed.length ? `; exposed: ${exposed.join(', ')}` : '; the folder exposes none (set exposeAsTool: true)';
    throw new CommandError(`no prompt or agent named "${name}" in ${registry.agentsDir}${suggestName(name, all)}${listed}`);
  }
  const required = prompt.definition.requiredSchema;
  return { name, kind: agent ? 'agent' : 'prompt', schema: required ? toJsonSchema(required) : messageInputSchema() };
}

/** Names of the prompts and agents with exposeAsTool, sorted. */
function exposedNames(registry: Registry): string[] {
  const names = [
    ...[...registry.prompts.values()].filter((p) => p.definition.exposeAsTool).map((p) => p.name),
    ...[...registry.agents.values()].filter((a) => a.definition.exposeAsTool).map((a) => a.name),
  ];
  return names.sort();
}
