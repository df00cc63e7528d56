/**
 * Hook execution. A prompt's `hooks` list replaces the agent's; a hook that
 * throws is reported and the data passes on unchanged. Every hook gets the
 * ThreadState first, then its point's data (see HookSignatures in
 * src/definitions/types.ts and docs/runtime.md).
 */
import type { HookDefinition, HookName, HookToolCall, ThreadState, ToolResult } from '../../definitions/types.js';
import { errorMessage } from '../../errors.js';
import type { Entry } from '../../registry/types.js';

// The runtime calls every hook through one shape; each point's typed signature is the user's contract.
type AnyHook = (state: ThreadState, ...data: unknown[]) => unknown;

export class HookRunner {
  constructor(
    private readonly hooks: ReadonlyArray<Entry<HookDefinition>>,
    private readonly report: (message: string) => void,
  ) {}

  /** The hooks a prompt runs: its own list, or the agent's when it has none. */
  static select(
    all: ReadonlyMap<string, Entry<HookDefinition>>,
    promptHooks: string[] | undefined,
    agentHooks: string[] | undefined,
  ): Array<Entry<HookDefinition>> {
    const ids = promptHooks ?? agentHooks ?? [];
    return ids.map((id) => all.get(id)).filter((hook): hook is Entry<HookDefinition> => hook !== undefined);
  }

  has(point: HookName): boolean {
    return this.hooks.some((hook) => hook.definition.hook === point);
  }

  /**
   * Runs every hook of a point in order; each may return a replacement of the
   * data (the last argument), which the next one receives. `leading` comes
   * between the state and the data (a message id, a tool call). A returned
   * value that `accept` refuses is reported and the data kept.
   */
  async transform<T>(
    point: HookName,
    state: ThreadState,
    data: T,
    leading: unknown[] = [],
    accept: (value: unknown) => value is T = isSameKind(data),
  ): Promise<T> {
    let current = data;
    for (const hook of this.at(point)) {
      try {
        const returned = await (hook.definition.execute as AnyHook)(state, ...leading, current);
        if (returned === undefined || returned === null) continue;
        if (accept(returned)) current = returned;
        else this.report(`hook "${hook.name}" (${point}) returned ${describe(returned)}, not what this point takes; data kept unchanged`);
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed, data kept unchanged: ${errorMessage(error)}`);
      }
    }
    return current;
  }

  /**
   * The tool-call outcome hooks. After a success each hook may replace the
   * result; after a failure the first hook that returns a result recovers
   * (its result replaces the error). Returns the replacement, if any.
   */
  async outcome(
    point: 'after_tool_call_success' | 'after_tool_call_failure',
    state: ThreadState,
    toolCall: HookToolCall,
    data: ToolResult | Error,
    accept: (value: unknown) => value is ToolResult,
  ): Promise<ToolResult | undefined> {
    let replacement: ToolResult | undefined;
    let current: unknown = data;
    for (const hook of this.at(point)) {
      try {
        const returned = await (hook.definition.execute as AnyHook)(state, toolCall, current);
        if (returned === undefined || returned === null) continue;
        if (!accept(returned)) {
          this.report(
            `hook "${hook.name}" (${point}) returned ${describe(returned)}, not a tool result ({ status, result?, error? }); result kept unchanged`,
          );
          continue;
        }
        replacement = returned;
        if (point === 'after_tool_call_failure') break;
        current = returned;
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed, result kept unchanged: ${errorMessage(error)}`);
      }
    }
    return replacement;
  }

  /** Runs the hooks of a notification point; return values are ignored. */
  async notify(point: HookName, state: ThreadState, ...data: unknown[]): Promise<void> {
    for (const hook of this.at(point)) {
      try {
        await (hook.definition.execute as AnyHook)(state, ...data);
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed: ${errorMessage(error)}`);
      }
    }
  }

  private at(point: HookName): Array<Entry<HookDefinition>> {
    return this.hooks.filter((hook) => hook.definition.hook === point);
  }
}

/** By default a replacement must be of the same kind as the data: a string for a string, an array for an array. */
function isSameKind<T>(data: T): (value: unknown) => value is T {
  return (value: unknown): value is T =>
    Array.isArray(data) ? Array.isArray(value) : typeof value === typeof data && Array.isArray(value) === Array.isArray(data);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object of another shape' : `a ${typeof value}`;
}
