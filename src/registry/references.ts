/**
 * Cross-reference checks once every file is loaded: prompts name existing
 * models, tools, hooks and includes; agents name existing prompts; exposed
 * names are valid MCP tool names.
 */
import type { LoadIssue } from '../definitions/issues.js';
import { resolveIncludes } from './includes.js';
import type { Entry, LoadedPrompt, Registry } from './types.js';
import type { PromptDefinition } from '../definitions/types.js';

/** The argument every exposed tool takes to continue a conversation. */
export const RESERVED_ARGUMENT = 'thread_id';

/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

type Draft = Omit<Registry, 'prompts'> & { prompts: Map<string, Entry<PromptDefinition>> };

/** Checks references and resolves includes; returns the prompts with their system text. */
export function checkReferences(draft: Draft, issues: LoadIssue[]): Map<string, LoadedPrompt> {
  const error = (entry: { file: string; name: string }, field: string, message: string) =>
    issues.push({ severity: 'error', file: entry.file, definition: entry.name, field, message });

  const callable = (name: string) => draft.tools.has(name) || draft.prompts.has(name) || draft.agents.has(name);

  for (const tool of draft.tools.values()) {
    if (!SNAKE_CASE.test(tool.name) || tool.name.length > 64) {
      issues.push({
        severity: 'warning',
        file: tool.file,
        definition: tool.name,
        message: 'tool names should be snake_case and 1-64 characters',
      });
    }
    if (draft.prompts.has(tool.name) || draft.agents.has(tool.name)) {
      error(tool, 'name', `"${tool.name}" is also the name of a ${draft.prompts.has(tool.name) ? 'prompt' : 'agent'}; tool references would be ambiguous`);
    }
  }

  for (const model of draft.models.values()) {
    model.definition.fallbacks?.forEach((fallback, i) => {
      if (!draft.models.has(fallback)) error(model, `fallbacks[${i}]`, `unknown model "${fallback}"`);
      else if (fallback === model.name) error(model, `fallbacks[${i}]`, 'a model cannot be its own fallback');
    });
  }

  const resolved = new Map<string, LoadedPrompt>();
  for (const prompt of draft.prompts.values()) {
    const def = prompt.definition;
    if (!draft.models.has(def.model)) {
      error(prompt, 'model', `unknown model "${def.model}"${suggest(def.model, draft.models.keys())}`);
    }
    const model = draft.models.get(def.model)?.definition;
    if (def.reasoning?.maxTokens !== undefined && model && model.reasoningStyle !== 'openrouter') {
      issues.push({
        severity: 'warning',
        file: prompt.file,
        definition: prompt.name,
        field: 'reasoning.maxTokens',
        message: `not sent: model "${model.name}" uses the OpenAI reasoning style, which has no reasoning token budget (set reasoningStyle: 'openrouter' on the model if its server takes one)`,
      });
    }
    def.tools?.forEach((ref, i) => {
      const name = typeof ref === 'string' ? ref : ref.name;
      if (!callable(name)) error(prompt, `tools[${i}]`, `unknown tool "${name}"${suggest(name, allCallables(draft))}`);
    });
    def.hooks?.forEach((id, i) => {
      if (!draft.hooks.has(id)) error(prompt, `hooks[${i}]`, `unknown hook id "${id}"${suggest(id, draft.hooks.keys())}`);
    });
    if (def.exposeAsTool && !MCP_TOOL_NAME.test(prompt.name)) {
      error(prompt, 'name', 'an exposed tool name must be 1-128 characters of letters, digits, "_", "-" and "."');
    }
    if (def.exposeAsTool && def.requiredSchema && RESERVED_ARGUMENT in def.requiredSchema.shape) {
      error(prompt, `requiredSchema.${RESERVED_ARGUMENT}`, `"${RESERVED_ARGUMENT}" is the argument every exposed tool uses to continue a thread; rename the field`);
    }
    const includes = resolveIncludes(prompt.name, (name) => draft.prompts.get(name)?.definition.prompt);
    if (includes.ok) {
      resolved.set(prompt.name, { ...prompt, systemText: includes.text });
    } else if (includes.reason === 'cycle') {
      error(prompt, 'prompt', `circular include: ${includes.chain.join(' -> ')}`);
    } else {
      error(prompt, 'prompt', `include of unknown prompt "${includes.missing}" (via ${includes.chain.join(' -> ')})`);
    }
  }

  for (const agent of draft.agents.values()) {
    const def = agent.definition;
    for (const [side, config] of [['sideA', def.sideA], ['sideB', def.sideB]] as const) {
      if (config && !draft.prompts.has(config.prompt)) error(agent, `${side}.prompt`, `unknown prompt "${config.prompt}"`);
    }
    def.hooks?.forEach((id, i) => {
      if (!draft.hooks.has(id)) error(agent, `hooks[${i}]`, `unknown hook id "${id}"`);
    });
    if (def.exposeAsTool && !MCP_TOOL_NAME.test(agent.name)) {
      error(agent, 'name', 'an exposed tool name must be 1-128 characters of letters, digits, "_", "-" and "."');
    }
    if (def.exposeAsTool && draft.prompts.get(agent.name)?.definition.exposeAsTool) {
      error(agent, 'name', `the prompt "${agent.name}" is exposed under the same tool name`);
    }
  }
  return resolved;
}

function allCallables(draft: Draft): string[] {
  return [...draft.tools.keys(), ...draft.prompts.keys(), ...draft.agents.keys()];
}

/** " (did you mean "x"?)" for a close name, else "". */
function suggest(name: string, candidates: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
