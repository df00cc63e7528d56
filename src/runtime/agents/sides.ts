/**
 * Builds the sides of a run. A prompt called directly is a run with one side
 * (A) that ends its turn on a text answer. An agent's sides come from its
 * definition: each runs its own prompt, with its own tools, hooks and stop
 * rules. Session tools (sessionStop/Fail/Status) and the stop tool are
 * offered to the side that binds them: the function tool of that name when
 * there is one, otherwise a control tool the runtime provides.
 */
import type { AgentDefinition, AgentSide, ModelRequestMessage, SessionToolBinding, ToolReference } from '../../definitions/types.js';
import type { Entry, LoadedPrompt } from '../../registry/types.js';
import { HookRunner } from '../hooks/hooks.js';
import type { ControlBinding, ControlRole, Run, Services, Side } from '../run/types.js';
import { DeferredTools } from '../tools/deferredTools.js';
import { buildToolset, specsOf, toolsetForTurn, type OfferedControlTool, type OfferedTool } from '../tools/toolset.js';

export interface SideSource {
  key: 'a' | 'b';
  prompt: LoadedPrompt;
  /** The agent's side config; undefined for a prompt called directly. */
  config: AgentSide | undefined;
  agent: Entry<AgentDefinition> | undefined;
  preamble: ModelRequestMessage[];
  /** Tool names a prompty body hoisted for this call. */
  extraTools: readonly string[];
  /** Tools a search loaded earlier in this thread. */
  loadedTools: readonly string[];
  /** The run's own name (a subagent instance): side A is called by it, side B after it. */
  runLabel?: string | undefined;
}

export function buildSide(services: Services, source: SideSource, log: (line: string) => void): Side {
  const { prompt, config, agent } = source;
  const controls = controlBindings(config);
  const toolset = prompt.definition.toolChoice === 'none' ? [] : sideToolset(services, prompt, source.extraTools, controls);
  return {
    key: source.key,
    label: sideLabel(source),
    prompt,
    stopOnResponse: config?.stopOnResponse ?? true,
    maxSteps: config?.maxSteps ?? services.maxSteps,
    controls,
    toolset,
    deferred: new DeferredTools(toolset, services.toolSearchThreshold, source.loadedTools),
    preamble: source.preamble,
    hooks: new HookRunner(HookRunner.select(services.registry.hooks, prompt.definition.hooks, agent?.definition.hooks), log),
  };
}

function sideLabel({ runLabel, config, prompt, key }: SideSource): string {
  const own = config?.label ?? prompt.name;
  if (!runLabel) return own;
  return key === 'a' ? runLabel : `${runLabel} (${own})`;
}

/**
 * Subagents with `optional: 'FLAG'` exist for a run only when FLAG resolves
 * (through the run's variables, then the server's environment) to true, 1 or
 * yes, in any case. Filtered toolsets are cached like the full ones.
 */
export function enableOptionalSubagents(run: Run): void {
  for (const side of [run.sides.a, run.sides.b]) {
    if (!side || !side.toolset.some(hasOptional)) continue;
    const enabled = (flag: string) => /^(true|1|yes)$/i.test((run.scope.get(flag) ?? run.services.env[flag] ?? '').trim());
    const off = new Set(
      side.toolset
        .flatMap(specsOf)
        .filter((spec) => spec.optional && !enabled(spec.optional))
        .map((spec) => spec.agent.name),
    );
    if (off.size === 0) continue;
    side.toolset = withoutSubagents(side.toolset, off);
    side.deferred = new DeferredTools(side.toolset, run.services.toolSearchThreshold, [...side.deferred.loaded]);
  }
}

function hasOptional(tool: OfferedTool): boolean {
  return specsOf(tool).some((spec) => spec.optional !== undefined);
}

const filteredToolsets = new WeakMap<readonly OfferedTool[], Map<string, OfferedTool[]>>();

function withoutSubagents(toolset: OfferedTool[], off: ReadonlySet<string>): OfferedTool[] {
  let byKey = filteredToolsets.get(toolset);
  if (!byKey) filteredToolsets.set(toolset, (byKey = new Map<string, OfferedTool[]>()));
  const key = [...off].sort().join(',');
  let filtered = byKey.get(key);
  if (!filtered) {
    filtered = toolset.flatMap((tool): OfferedTool[] => {
      if (tool.kind === 'subagent') return off.has(tool.spec.agent.name) ? [] : [tool];
      if (tool.kind !== 'lifecycle') return [tool];
      const subagents = tool.subagents.filter((spec) => !off.has(spec.agent.name));
      return subagents.length === 0 ? [] : [{ ...tool, subagents }];
    });
    byKey.set(key, filtered);
  }
  return filtered;
}

function controlBindings(config: AgentSide | undefined): Map<string, ControlBinding> {
  const controls = new Map<string, ControlBinding>();
  if (!config) return controls;
  const add = (role: ControlRole, binding: SessionToolBinding | undefined) => {
    if (binding === undefined) return;
    const object = typeof binding === 'string' ? { name: binding } : binding;
    controls.set(object.name, {
      role,
      name: object.name,
      messageProperty: object.messageProperty ?? 'message',
      ...(object.attachmentsProperty ? { attachmentsProperty: object.attachmentsProperty } : {}),
    });
  };
  add('session_status', config.sessionStatus);
  add('session_fail', config.sessionFail);
  add('session_stop', config.sessionStop);
  if (config.stopTool) {
    controls.set(config.stopTool, { role: 'stop_tool', name: config.stopTool, messageProperty: config.stopToolResponseProperty ?? '' });
  }
  return controls;
}

/**
 * A side's tools, built once per prompt and set of controls and then reused,
 * so the deferred-search index over them is built once too.
 */
const sideToolsets = new WeakMap<readonly OfferedTool[], Map<string, OfferedTool[]>>();

function sideToolset(
  services: Services,
  prompt: LoadedPrompt,
  extra: readonly string[],
  controls: ReadonlyMap<string, ControlBinding>,
): OfferedTool[] {
  const base = toolsetForTurn(services, prompt, extra);
  if (controls.size === 0) return base;
  let byControls = sideToolsets.get(base);
  if (!byControls) sideToolsets.set(base, (byControls = new Map<string, OfferedTool[]>()));
  const key = JSON.stringify([...controls.values()]);
  let toolset = byControls.get(key);
  if (toolset) return toolset;

  const missing = [...controls.values()].filter((binding) => !base.some((tool) => tool.name === binding.name));
  // A bound name that is a function tool the prompt does not list is offered anyway.
  const registered: ToolReference[] = missing.filter((b) => services.registry.tools.has(b.name)).map((b) => b.name);
  toolset = [
    ...(registered.length ? buildToolset(services.registry, prompt.definition, [...extra, ...registered]) : base),
    ...missing.filter((b) => !services.registry.tools.has(b.name)).map(controlTool),
  ];
  byControls.set(key, toolset);
  return toolset;
}

const CONTROL_DESCRIPTIONS: Record<ControlRole, string> = {
  session_stop: 'End the session: call this when the task is complete. Its message is the final result.',
  session_fail: 'End the session as failed: call this when the task cannot be completed. Its message says why.',
  session_status: 'Report progress to the caller. Your turn goes on.',
  stop_tool: 'End your turn.',
};

function controlTool(binding: ControlBinding): OfferedControlTool {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (binding.messageProperty) {
    properties[binding.messageProperty] = {
      type: 'string',
      description:
        binding.role === 'stop_tool'
          ? 'Your response for this turn.'
          : binding.role === 'session_status'
            ? 'The status to report.'
            : 'The message for the caller.',
    };
    required.push(binding.messageProperty);
  }
  if (binding.attachmentsProperty) {
    properties[binding.attachmentsProperty] = {
      type: 'array',
      items: { type: 'string' },
      description: 'Paths of files to hand over (/attachments/...).',
    };
  }
  return {
    kind: 'control',
    name: binding.name,
    description: CONTROL_DESCRIPTIONS[binding.role],
    parameters: { type: 'object', properties, required, additionalProperties: false },
    env: {},
    options: {},
    defer: false,
    alwaysLoad: true,
    binding,
  };
}
