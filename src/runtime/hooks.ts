/**
 * Hook execution. A prompt's `hooks` list replaces the agent's; a hook that
 * throws is reported and the data passes on unchanged.
 *
 * Data passed at each point (and what a hook may return):
 * - filter_messages(stored messages) -> messages: the thread history before context assembly
 * - prefilter_llm_history(wire messages) -> messages: the exact messages about to be sent
 * - before_create_message(new message) -> message: before any message is stored
 * - after_create_message(stored message): after it is stored
 * - before_store_tool_result({ tool, args, result }) -> result: before a tool result is stored
 * - after_tool_call_success({ tool, args, result }) / after_tool_call_failure({ tool, args, result })
 * - after_thread_created(thread record)
 */
import type { HookDefinition, HookName, ThreadState } from '../definitions/types.js';
import type { Entry } from '../registry/types.js';

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

  /** Runs every hook of a point in order; each may replace the data. */
  async transform<T>(point: HookName, state: ThreadState, data: T): Promise<T> {
    let current = data;
    for (const hook of this.hooks) {
      if (hook.definition.hook !== point) continue;
      try {
        const returned = await hook.definition.execute(state, current);
        if (returned !== undefined) current = returned as T;
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed, data kept unchanged: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return current;
  }

  /** Runs the hooks of a notification point; return values are ignored. */
  async notify(point: HookName, state: ThreadState, data: unknown): Promise<void> {
    for (const hook of this.hooks) {
      if (hook.definition.hook !== point) continue;
      try {
        await hook.definition.execute(state, data);
      } catch (error) {
        this.report(`hook "${hook.name}" (${point}) failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
