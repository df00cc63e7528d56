/**
 * Variables and env values. Sources merge from lowest to highest precedence:
 * the prompt's `env`, a tool config's `env` (for that tool only), the agent's
 * `env`, the server's environment (declared names only), values inherited
 * from a parent thread (except names the child declares `scoped`), the
 * thread's stored values, and the values supplied with the call. Later wins.
 */
import type { VariableDefinition } from '../../definitions/types.js';
import { isZodObject } from '../../definitions/zodShape.js';
import type { AnyToolDefinition } from '../../registry/types.js';
import type { OfferedTool } from '../tools/toolset.js';

export interface Declared extends VariableDefinition {
  /** Who declared it, for error messages: `prompt "x"`, `tool "y"`. */
  declaredBy: string;
  /** The function tool that declared it, whose config env can satisfy it. */
  tool?: string;
}

type Layer = Readonly<Record<string, string | undefined>> | undefined;

export class VariableScope {
  private readonly defaults: Readonly<Record<string, string>>;
  private readonly overrides = new Map<string, string>();
  /**
   * Names whose value flows to descendants even where they declare it scoped:
   * this thread declares it scoped, or holds the value as its own.
   */
  private readonly owned: Set<string>;
  /** Types of names set on the thread that nobody declared (ThreadState.setEnv). */
  private readonly undeclaredTypes = new Map<string, 'secret' | 'text'>();

  constructor(
    /** Every variable declared by the prompt, its agent and its tools. */
    readonly declared: readonly Declared[],
    sources: {
      /** The prompt's `env`: the lowest layer. */
      defaults?: Readonly<Record<string, string>> | undefined;
      /** Per-tool defaults from `{ name, env }` tool configs, above the prompt's. */
      toolDefaults?: ReadonlyMap<string, Readonly<Record<string, string>>>;
      /** Higher layers, lowest first: agent env, server env, inherited, thread, call. */
      layers?: Layer[];
      /** Names whose value this thread holds as its own (stored with it, given with the call, or passed down a scope). */
      owned?: Iterable<string>;
    },
    private readonly toolDefaults: ReadonlyMap<string, Readonly<Record<string, string>>> = sources.toolDefaults ?? new Map(),
  ) {
    this.defaults = sources.defaults ?? {};
    this.owned = new Set([...(sources.owned ?? []), ...declared.filter((d) => d.scoped).map((d) => d.name)]);
    for (const layer of sources.layers ?? []) {
      for (const [name, value] of Object.entries(layer ?? {})) if (value !== undefined) this.overrides.set(name, value);
    }
  }

  /** The value seen by the prompt, or by `tool` (whose config env sits above the prompt's). */
  get(name: string, tool?: string): string | undefined {
    return this.overrides.get(name) ?? (tool ? this.toolDefaults.get(tool)?.[name] : undefined) ?? this.defaults[name];
  }

  /** Every value the prompt sees (tool defaults excluded): what a child thread inherits. */
  entries(): Array<[string, string]> {
    return [...new Map([...Object.entries(this.defaults), ...this.overrides]).entries()];
  }

  /** Sets a value above every layer (ThreadState.setEnv). */
  set(name: string, value: string, type: 'secret' | 'text'): void {
    this.overrides.set(name, value);
    if (!this.declared.some((d) => d.name === name)) this.undeclaredTypes.set(name, type);
  }

  /** 'secret' or 'text' for a name with a value; undefined otherwise. */
  typeOf(name: string, tool?: string): 'secret' | 'text' | undefined {
    if (this.get(name, tool) === undefined) return undefined;
    const declared = this.declared.find((d) => d.name === name);
    if (declared) return declared.type;
    // Values nobody declared (set on the thread, or env defaults) are secret unless set as text.
    return this.undeclaredTypes.get(name) ?? 'secret';
  }

  secretValues(): string[] {
    const out: string[] = [];
    for (const declaration of this.declared) {
      if (declaration.type !== 'secret') continue;
      const value = this.get(declaration.name);
      if (value !== undefined) out.push(value);
      for (const defaults of this.toolDefaults.values()) {
        const toolValue = defaults[declaration.name];
        if (toolValue !== undefined) out.push(toolValue);
      }
    }
    return out;
  }

  /** Required variables without a value, each with who declared it. */
  missing(): Declared[] {
    return this.declared.filter((d) => d.required && this.get(d.name, d.tool) === undefined);
  }

  isSecret(name: string): boolean {
    return this.declared.some((d) => d.name === name && d.type === 'secret') || this.undeclaredTypes.get(name) === 'secret';
  }

  /** Whether a child that declares `name` scoped still gets this thread's value (it is this subtree's own). */
  passesScoped(name: string): boolean {
    return this.owned.has(name) && this.get(name) !== undefined;
  }

  isScoped(name: string): boolean {
    return this.declared.some((d) => d.name === name && d.scoped === true);
  }
}

/** A tool's declared variables plus its `tenvs` fields (required unless optional). */
export function toolDeclarations(name: string, tool: AnyToolDefinition): Declared[] {
  const declaredBy = `tool "${name}"`;
  const out: Declared[] = (tool.variables ?? []).map((v) => ({ ...v, declaredBy, tool: name }));
  if (isZodObject(tool.tenvs)) {
    for (const [field, schema] of Object.entries(tool.tenvs.shape)) {
      const optional = (schema as { _zod?: { optin?: string } })._zod?.optin === 'optional';
      out.push({ name: field, type: 'text', required: !optional, description: '', declaredBy, tool: name });
    }
  }
  return out;
}

/** Names from the server's environment: only declared ones, so tools see nothing else by accident. */
export function declaredFromEnvironment(
  declared: readonly Declared[],
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of declared) {
    const value = env[d.name];
    if (value !== undefined && value !== '') out[d.name] = value;
  }
  return out;
}

/** What a run may need a value for: its prompt's, its agent's and its function tools' declarations. */
export function declarationsFor(
  prompt: { name: string; definition: { variables?: VariableDefinition[] } },
  agent: { name: string; definition: { variables?: VariableDefinition[] } } | undefined,
  toolset: readonly OfferedTool[],
): Declared[] {
  const out: Declared[] = [
    ...(prompt.definition.variables ?? []).map((v) => ({ ...v, declaredBy: `prompt "${prompt.name}"` })),
    ...(agent ? (agent.definition.variables ?? []).map((v) => ({ ...v, declaredBy: `agent "${agent.name}"` })) : []),
  ];
  for (const tool of toolset) if (tool.kind === 'function') out.push(...toolDeclarations(tool.name, tool.tool.definition));
  return out;
}

/** Per-tool env defaults from the `{ name, env }` configs of a toolset. */
export function toolEnvDefaults(toolset: readonly OfferedTool[]): Map<string, Readonly<Record<string, string>>> {
  return new Map(toolset.map((tool) => [tool.name, tool.env] as const));
}
