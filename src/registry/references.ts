/**
 * Cross-reference checks once every file is loaded: prompts name existing
 * models, tools, hooks and includes; agents name existing prompts; exposed
 * names are valid MCP tool names.
 */
import { suggestName as suggest, type LoadIssue } from '../definitions/issues.js';
import { TOOL_CONFIG_KEYS, SUBAGENT_ONLY_FIELDS } from '../definitions/schemas.js';
import { LoadFailures } from './failures.js';
import { iconProblem } from './icons.js';
import { resolveIncludes } from './includes.js';
import type { Entry, LoadedPrompt, Registry } from './types.js';
import type { PromptDefinition, ToolReference } from '../definitions/types.js';
import { checkUpstreamReference, isUpstreamName } from '../upstream/references.js';
import { RESERVED_ARGUMENT } from '../definitions/reservedArgument.js';

/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

type Draft = Omit<Registry, 'prompts'> & { prompts: Map<string, Entry<PromptDefinition>> };

/** Checks references and resolves includes; returns the prompts with their system text. */
export function checkReferences(draft: Draft, issues: LoadIssue[], failures: LoadFailures = new LoadFailures()): Map<string, LoadedPrompt> {
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
      error(
        tool,
        'name',
        `"${tool.name}" is also the name of a ${draft.prompts.has(tool.name) ? 'prompt' : 'agent'}; tool references would be ambiguous`,
      );
    }
  }

  for (const model of draft.models.values()) {
    model.definition.fallbacks?.forEach((fallback, i) => {
      if (!draft.models.has(fallback))
        error(model, `fallbacks[${i}]`, failures.explain(['model'], fallback) ?? `unknown model "${fallback}"`);
      else if (fallback === model.name) error(model, `fallbacks[${i}]`, 'a model cannot be its own fallback');
    });
  }

  const resolved = new Map<string, LoadedPrompt>();
  for (const prompt of draft.prompts.values()) {
    const def = prompt.definition;
    if (!draft.models.has(def.model)) {
      error(
        prompt,
        'model',
        failures.explain(['model'], def.model) ?? `unknown model "${def.model}"${suggest(def.model, draft.models.keys())}`,
      );
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
    const listedAt = new Map<string, number>();
    const upstreamAt = new Map<string, number[]>();
    def.tools?.forEach((ref, i) => {
      const name = typeof ref === 'string' ? ref : ref.name;
      // Several entries of one upstream server are merged (upstream/references.ts), unless merging would drop what one says.
      const upstream = isUpstreamName(name);
      const earlier = upstream ? (upstreamAt.get(name) ?? []) : [];
      const clash = earlier.map((at) => upstreamClash(def.tools!, at, i)).find((why) => why !== undefined);
      if (clash) {
        error(prompt, `tools[${i}]`, clash);
        return;
      }
      if (upstream) upstreamAt.set(name, [...earlier, i]);
      const first = upstream ? undefined : listedAt.get(name);
      if (first !== undefined) {
        // A model sees one tool per name: the second entry (its options, say) would be dropped without a word.
        error(prompt, `tools[${i}]`, `"${name}" is listed twice (tools[${first}] and tools[${i}]): list it once, with its options`);
        return;
      }
      listedAt.set(name, i);
      // mcp:<server>[/<tool>]: tools of an upstream MCP server (agents/mcp.json).
      if (isUpstreamName(name))
        issues.push(...checkUpstreamReference(ref, draft.upstream, { file: prompt.file, definition: prompt.name, field: `tools[${i}]` }));
      else if (!callable(name))
        error(
          prompt,
          `tools[${i}]`,
          failures.explain(['tool', 'prompt', 'agent'], name) ?? `unknown tool "${name}"${suggest(name, allCallables(draft))}`,
        );
      else if (typeof ref !== 'string') checkToolConfig(draft, prompt, `tools[${i}]`, ref as unknown as Record<string, unknown>, issues);
    });
    def.hooks?.forEach((id, i) => {
      if (!draft.hooks.has(id))
        error(prompt, `hooks[${i}]`, failures.explain(['hook'], id) ?? `unknown hook id "${id}"${suggest(id, draft.hooks.keys())}`);
    });
    const promptIcon = def.icon === undefined ? undefined : iconProblem(def.icon, draft.agentsDir);
    if (promptIcon) error(prompt, 'icon', promptIcon);
    if (def.exposeAsTool && !MCP_TOOL_NAME.test(prompt.name)) {
      error(prompt, 'name', 'an exposed tool name must be 1-128 characters of letters, digits, "_", "-" and "."');
    }
    if (def.exposeAsTool && def.requiredSchema && RESERVED_ARGUMENT in def.requiredSchema.shape) {
      error(
        prompt,
        `requiredSchema.${RESERVED_ARGUMENT}`,
        `"${RESERVED_ARGUMENT}" is the argument every exposed tool uses to continue a thread; rename the field`,
      );
    }
    // A prompt rejected for its own errors still counts here, so a cycle through it is reported as a cycle.
    const includes = resolveIncludes(
      prompt.name,
      (name) => draft.prompts.get(name)?.definition.prompt ?? failures.rejectedPromptContent(name),
    );
    if (includes.ok) {
      resolved.set(prompt.name, { ...prompt, systemText: includes.text });
    } else if (includes.reason === 'cycle') {
      error(prompt, 'prompt', `circular include: ${includes.chain.join(' -> ')}`);
    } else {
      const why = failures.explain(['prompt'], includes.missing);
      error(
        prompt,
        'prompt',
        why
          ? `${why}; included via ${includes.chain.join(' -> ')}`
          : `include of unknown prompt "${includes.missing}" (via ${includes.chain.join(' -> ')})`,
      );
    }
  }

  for (const agent of draft.agents.values()) {
    const def = agent.definition;
    for (const [side, config] of [
      ['sideA', def.sideA],
      ['sideB', def.sideB],
    ] as const) {
      if (config && !draft.prompts.has(config.prompt))
        error(agent, `${side}.prompt`, failures.explain(['prompt'], config.prompt) ?? `unknown prompt "${config.prompt}"`);
    }
    def.hooks?.forEach((id, i) => {
      if (!draft.hooks.has(id)) error(agent, `hooks[${i}]`, failures.explain(['hook'], id) ?? `unknown hook id "${id}"`);
    });
    const agentIcon = def.icon === undefined ? undefined : iconProblem(def.icon, draft.agentsDir);
    if (agentIcon) error(agent, 'icon', agentIcon);
    if (def.exposeAsTool && !MCP_TOOL_NAME.test(agent.name)) {
      error(agent, 'name', 'an exposed tool name must be 1-128 characters of letters, digits, "_", "-" and "."');
    }
    if (def.exposeAsTool && draft.prompts.get(agent.name)?.definition.exposeAsTool) {
      error(agent, 'name', `the prompt "${agent.name}" is exposed under the same tool name`);
    }
  }
  checkRejectedReferences(draft, failures, issues, error, callable);
  return resolved;
}

/**
 * The references of prompts and agents rejected for errors of their own: their unknown models, tools,
 * hooks and prompts are reported in the same pass, not once the other errors are fixed. Only fields
 * of the right shape are read (a field of the wrong type is reported already).
 */
function checkRejectedReferences(
  draft: Draft,
  failures: LoadFailures,
  issues: LoadIssue[],
  error: (entry: { file: string; name: string }, field: string, message: string) => void,
  callable: (name: string) => boolean,
): void {
  const strings = (value: unknown): Array<[number, string]> =>
    Array.isArray(value) ? value.flatMap((item, i): Array<[number, string]> => (typeof item === 'string' ? [[i, item]] : [])) : [];
  for (const entry of failures.rejectedOf('prompt')) {
    const value = entry.value as { model?: unknown; tools?: unknown; hooks?: unknown };
    if (typeof value.model === 'string' && value.model && !draft.models.has(value.model)) {
      error(
        entry,
        'model',
        failures.explain(['model'], value.model) ?? `unknown model "${value.model}"${suggest(value.model, draft.models.keys())}`,
      );
    }
    const tools = Array.isArray(value.tools)
      ? value.tools.flatMap((ref: unknown, i): Array<[number, string]> => {
          const name = typeof ref === 'string' ? ref : (ref as { name?: unknown } | null)?.name;
          return typeof name === 'string' && name ? [[i, name]] : [];
        })
      : [];
    for (const [i, name] of tools) {
      if (isUpstreamName(name)) {
        // The server it names; the entry's other keys may be what got it rejected, and are reported already.
        const field = `tools[${i}]`;
        const where = { file: entry.file, definition: entry.name, field };
        issues.push(...checkUpstreamReference({ name }, draft.upstream, where).filter((issue) => issue.field === field));
      } else if (!callable(name)) {
        error(
          entry,
          `tools[${i}]`,
          failures.explain(['tool', 'prompt', 'agent'], name) ?? `unknown tool "${name}"${suggest(name, allCallables(draft))}`,
        );
      }
    }
    for (const [i, id] of strings(value.hooks)) {
      if (!draft.hooks.has(id))
        error(entry, `hooks[${i}]`, failures.explain(['hook'], id) ?? `unknown hook id "${id}"${suggest(id, draft.hooks.keys())}`);
    }
  }
  for (const entry of failures.rejectedOf('agent')) {
    const value = entry.value as { sideA?: { prompt?: unknown }; sideB?: { prompt?: unknown } };
    for (const side of ['sideA', 'sideB'] as const) {
      const prompt = value[side]?.prompt;
      if (typeof prompt === 'string' && prompt && !draft.prompts.has(prompt)) {
        error(
          entry,
          `${side}.prompt`,
          failures.explain(['prompt'], prompt) ?? `unknown prompt "${prompt}"${suggest(prompt, draft.prompts.keys())}`,
        );
      }
    }
  }
}

/**
 * Why two entries of one `mcp:` name cannot be merged: the tools they offer add up, so an `exclude` would be
 * undone by the other entry, and one timeout would silently win over the other.
 */
function upstreamClash(tools: readonly ToolReference[], earlier: number, later: number): string | undefined {
  const options = (ref: ToolReference) => (typeof ref === 'string' ? {} : (ref as { exclude?: unknown; timeoutMs?: unknown }));
  const [a, b] = [options(tools[earlier]!), options(tools[later]!)];
  const name = typeof tools[later] === 'string' ? tools[later] : tools[later]!.name;
  const twice = `"${name}" is listed twice (tools[${earlier}] and tools[${later}])`;
  if (a.exclude !== undefined || b.exclude !== undefined) {
    return `${twice} and one has exclude: the other offers the excluded tools again; list it once, with its exclude`;
  }
  if (a.timeoutMs !== undefined && b.timeoutMs !== undefined && a.timeoutMs !== b.timeoutMs) {
    return `${twice} with different timeoutMs (${JSON.stringify(a.timeoutMs)} and ${JSON.stringify(b.timeoutMs)}): give one`;
  }
  return undefined;
}

function allCallables(draft: Draft): string[] {
  return [...draft.tools.keys(), ...draft.prompts.keys(), ...draft.agents.keys()];
}

/**
 * The keys of a `{ name, ... }` tool config depend on what the name refers to
 * (the runtime's order: a function tool, then an agent, then a prompt). Keys
 * of another kind, or of none, are warnings; so are subagent fields on an
 * agent that is not dual_ai (it runs as a sub-prompt).
 */
function checkToolConfig(
  draft: Draft,
  prompt: Entry<PromptDefinition>,
  field: string,
  config: Record<string, unknown>,
  issues: LoadIssue[],
): void {
  const name = String(config.name);
  const kind = draft.tools.has(name) ? 'tool' : draft.agents.has(name) ? 'agent' : 'prompt';
  const known: readonly string[] = TOOL_CONFIG_KEYS[kind];
  const what = { tool: `tool "${name}"`, agent: `agent "${name}" (a subagent config)`, prompt: `prompt "${name}" (a sub-prompt config)` }[
    kind
  ];
  const warn = (key: string, message: string) =>
    issues.push({ severity: 'warning', file: prompt.file, definition: prompt.name, field: `${field}.${key}`, message });
  for (const key of Object.keys(config)) {
    if (config[key] === undefined) continue;
    if (!known.includes(key)) {
      warn(key, `unknown key "${key}" in the config of ${what} is ignored (it takes ${known.join(', ')})${suggest(key, known)}`);
    } else if (
      kind === 'agent' &&
      (SUBAGENT_ONLY_FIELDS as readonly string[]).includes(key) &&
      draft.agents.get(name)?.definition.type !== 'dual_ai'
    ) {
      warn(key, `${key} is ignored: only dual_ai agents run as subagents; "${name}" is an ai_human agent and runs as a sub-prompt`);
    }
  }
}
