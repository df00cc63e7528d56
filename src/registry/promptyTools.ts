/**
 * The `tools:` sections of `.prompty` bodies against the registry, once every file is loaded.
 *
 * - A name (`- search_docs`, `- name: x`) must be a registered tool, prompt or agent: an unknown
 *   one is a load error with the file and line, not a failure of every call.
 * - A Prompty entry `{id, type, options}` defines the tool `id`: the registered tool named `type`
 *   offered under the name `id` (or the tool named `id`, when there is one). When nothing
 *   implements it (say `type: bing` without an agents/tools/bing.ts), it is left out of the calls
 *   with a load warning, so the section works as Prompty files write it.
 * - An entry's `options` reach its tool as `state.context.options` when the tool runs, rendered
 *   with the call's arguments (the runtime hands the tool `ThreadState.prompt` and `.arguments`,
 *   enough to render the section again for that call).
 *
 * Entries whose name, id or type come from template values are checked by the runtime per call.
 */
import { suggestName, type LoadIssue } from '../definitions/issues.js';
import type { ThreadState, ToolResult } from '../definitions/types.js';
import { renderPromptyTools } from '../prompty/render.js';
import { staticToolsSection, type StaticToolEntry } from '../prompty/sectionTools.js';
import type { LoadedPrompty } from '../prompty/types.js';
import type { AnyToolDefinition, Entry } from './types.js';

/** What this step reads and extends of the registry being built. */
export interface ToolDraft {
  tools: Map<string, Entry<AnyToolDefinition>>;
  prompts: ReadonlyMap<string, unknown>;
  agents: ReadonlyMap<string, unknown>;
}

/** A loaded `.prompty` prompt and the file name issues show. */
export interface PromptySource {
  prompty: LoadedPrompty;
  file: string;
}

/** Which section entry configures a tool for one prompt. */
interface Binding {
  prompty: LoadedPrompty;
  match: { id: string } | { name: string };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks the static entries of every body `tools:` section, registers the tools the sections
 * define (an `id` implemented by the tool named `type`), and makes entry `options` reach the tools.
 * @returns the prompts whose loaded file changed (entries nothing implements are skipped)
 */
export function bindPromptyTools(draft: ToolDraft, sources: readonly PromptySource[], issues: LoadIssue[]): Map<string, LoadedPrompty> {
  const sections = sources.map((source) => ({ ...source, entries: staticToolsSection(source.prompty) ?? [] }));
  const where = (source: PromptySource, entry: StaticToolEntry) => ({
    file: entry.line !== undefined ? `${source.file}:${entry.line}` : source.file,
    definition: source.prompty.name,
    field: `tools[${entry.index}]`,
  });
  const callable = (name: string) => draft.tools.has(name) || draft.prompts.has(name) || draft.agents.has(name);

  // 1. Tools the sections define, registered before any name is checked (a section may name one).
  const defined = new Map<string, { type: string; file: string }>();
  for (const source of sections) {
    for (const entry of source.entries) {
      if (entry.dynamic || entry.name !== undefined || entry.id === undefined || entry.type === undefined) continue;
      if (callable(entry.id) && !defined.has(entry.id)) continue;
      const implementation = draft.tools.get(entry.type);
      if (!implementation) continue;
      const earlier = defined.get(entry.id);
      if (earlier && earlier.type !== entry.type) {
        issues.push({
          severity: 'error',
          ...where(source, entry),
          message: `tool "${entry.id}" is also defined with type "${earlier.type}" in ${earlier.file}; give one of them another id`,
        });
        continue;
      }
      if (earlier) continue;
      defined.set(entry.id, { type: entry.type, file: where(source, entry).file });
      const description = entry.description ?? implementation.definition.description;
      draft.tools.set(entry.id, { name: entry.id, file: source.file, definition: { ...implementation.definition, description } });
    }
  }

  // 2. Names checked, unimplemented entries skipped, options bound.
  const bindings = new Map<string, Map<string, Binding>>();
  const bind = (tool: string, source: PromptySource, match: Binding['match']) => {
    if (!draft.tools.has(tool)) return;
    const perPrompt = bindings.get(tool) ?? new Map<string, Binding>();
    if (!perPrompt.has(source.prompty.name)) perPrompt.set(source.prompty.name, { prompty: source.prompty, match });
    bindings.set(tool, perPrompt);
  };
  const changed = new Map<string, LoadedPrompty>();
  for (const source of sections) {
    const skip = new Set<string>();
    for (const entry of source.entries) {
      if (entry.dynamic) continue;
      if (entry.hasEnv) {
        issues.push({
          severity: 'warning',
          ...where(source, entry),
          message: 'env of a body tools entry is not applied; give the tool config in the frontmatter tools field',
        });
      }
      if (entry.name !== undefined) {
        if (!callable(entry.name)) {
          issues.push({
            severity: 'error',
            ...where(source, entry),
            message: `unknown tool "${entry.name}"${suggestName(entry.name, [...draft.tools.keys(), ...draft.prompts.keys(), ...draft.agents.keys()])}`,
          });
        } else if (entry.hasOptions) {
          bind(entry.name, source, { name: entry.name });
        }
        continue;
      }
      if (entry.id === undefined) continue;
      if (callable(entry.id)) {
        if (entry.hasOptions) bind(entry.id, source, { id: entry.id });
        continue;
      }
      if (entry.type !== undefined && (draft.prompts.has(entry.type) || draft.agents.has(entry.type))) {
        issues.push({
          severity: 'error',
          ...where(source, entry),
          message: `type "${entry.type}" is a ${draft.prompts.has(entry.type) ? 'prompt' : 'agent'}: list it by name ("- ${entry.type}") to call it as a tool`,
        });
        continue;
      }
      const type = entry.type === undefined ? '' : ` (type "${entry.type}")`;
      const implement = entry.type === undefined ? `agents/tools/${entry.id}.ts` : `agents/tools/${entry.type}.ts`;
      issues.push({
        severity: 'warning',
        ...where(source, entry),
        message: `tool "${entry.id}"${type} is not offered to the model: no registered tool implements it (add ${implement})`,
      });
      skip.add(entry.id);
    }
    if (skip.size > 0) changed.set(source.prompty.name, { ...source.prompty, skipTools: skip });
  }

  for (const [name, perPrompt] of bindings) {
    const tool = draft.tools.get(name) as Entry<AnyToolDefinition>;
    draft.tools.set(name, { ...tool, definition: withSectionOptions(tool.definition, perPrompt) });
  }
  return changed;
}

/**
 * The tool, with the `options` of the section entry of the prompt it runs for, rendered with that
 * call's arguments, put in `state.context.options` (under any options of a frontmatter config).
 */
function withSectionOptions(definition: AnyToolDefinition, perPrompt: ReadonlyMap<string, Binding>): AnyToolDefinition {
  // `execute` is typed per args shape; the wrapper passes whatever the runtime gives through.
  const original = definition.execute as (state: ThreadState, ...rest: unknown[]) => Promise<ToolResult>;
  const execute = async (state: ThreadState, ...rest: unknown[]): Promise<ToolResult> => {
    const binding = perPrompt.get(state.prompt);
    if (binding) {
      const entries = await renderPromptyTools(binding.prompty, { ...state.arguments });
      const entry = entries.find(
        (e): e is Record<string, unknown> =>
          isRecord(e) && ('id' in binding.match ? e['id'] === binding.match.id : e['name'] === binding.match.name),
      );
      const options = entry?.['options'];
      if (isRecord(options)) {
        const config = state.context['options'];
        state.context['options'] = { ...options, ...(isRecord(config) ? config : {}) };
      }
    }
    return original(state, ...rest);
  };
  return { ...definition, execute: execute };
}
