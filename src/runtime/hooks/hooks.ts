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

/** What a point without hooks answers at once: most points of most runs have none. */
const NOTHING_TO_RUN: Promise<void> = Promise.resolve();

export class HookRunner {
  /** The hooks of each point that has any, in order. */
  private readonly byPoint = new Map<HookName, Array<Entry<HookDefinition>>>();

  constructor(
    hooks: ReadonlyArray<Entry<HookDefinition>>,
    private readonly report: (message: string) => void,
  ) {
    for (const hook of hooks) {
      const list = this.byPoint.get(hook.definition.hook);
      if (list) list.push(hook);
      else this.byPoint.set(hook.definition.hook, [hook]);
    }
  }

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
    return this.byPoint.has(point);
  }

  /**
   * Runs every hook of a point in order; each may return a replacement of the
   * data (the last argument), which the next one receives. `leading` comes
   * between the state and the data (a message id, a tool call). A returned
   * value that `accept` refuses is reported and the data kept.
   */
  transform<T>(point: HookName, state: ThreadState, data: T, leading: unknown[] = [], accept?: (value: unknown) => value is T): Promise<T> {
    const hooks = this.byPoint.get(point);
    return hooks ? this.runTransform(hooks, point, state, data, leading, accept ?? isSameKind(data)) : Promise.resolve(data);
  }

  private async runTransform<T>(
    hooks: ReadonlyArray<Entry<HookDefinition>>,
    point: HookName,
    state: ThreadState,
    data: T,
    leading: unknown[],
    accept: (value: unknown) => value is T,
  ): Promise<T> {
    let current = data;
    for (const hook of hooks) {
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
    for (const hook of this.byPoint.get(point) ?? []) {
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
  notify(point: HookName, state: ThreadState, ...data: unknown[]): Promise<void> {
    const hooks = this.byPoint.get(point);
    return hooks ? this.runNotify(hooks, point, state, data) : NOTHING_TO_RUN;
  }

  private async runNotify(
    hooks: ReadonlyArray<Entry<HookDefinition>>,
    point: HookName,
    state: ThreadState,
    data: unknown[],
  ): Promise<void> {
    for (const hook of hooks) {
      try {
        await (hook.definition.execute as AnyHook)(state, ...data);
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed: ${errorMessage(error)}`);
      }
    }
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
