/**
 * `immediate` subagents start when their prompt becomes active, before its
 * first model step, once per parent thread. `immediate: { nameEnv,
 * descriptionEnv, scopedEnv }` takes the instance's name and description
 * from those variables and copies the variables named in `scopedEnv` into the
 * child's thread (values that only its tools see). A resumable instance then
 * waits for messages; any other starts a session with the parent's opening
 * message, blocking ones finishing (their result stored in the parent's
 * thread) before the parent's first step.
 */
import { textOf } from '../../models/wire.js';
import { storeMessage } from '../loop/storeMessage.js';
import type { Run, Side } from '../run/types.js';
import { threadState } from '../state/threadState.js';
import { specsOf, type OfferedTool, type SubagentSpec } from '../tools/toolset.js';
import { start } from './lifecycle.js';
import { childRecords, pendingOf } from './registry.js';

/** Starts the run's immediate subagents not started yet; undefined (nothing to wait for) when there are none. */
export function startImmediateSubagents(run: Run): Promise<void> | undefined {
  const sides = [run.sides.a, run.sides.b].filter((side): side is Side => side !== undefined && side.toolset.some(offersImmediate));
  return sides.length > 0 ? startEach(run, sides) : undefined;
}

function offersImmediate(tool: OfferedTool): boolean {
  return specsOf(tool).some((spec) => spec.config.immediate);
}

async function startEach(run: Run, sides: Side[]): Promise<void> {
  for (const side of sides) {
    // subagent_create and subagent_message carry the same specs: each subagent once.
    const specs = new Map(side.toolset.flatMap(specsOf).map((spec) => [spec.agent.name, spec] as const));
    for (const spec of specs.values()) {
      if (!spec.config.immediate) continue;
      const started = childRecords(run.thread.meta).some((r) => r.agent === spec.agent.name && r.immediate);
      const waiting = Object.values(pendingOf(run.thread.meta)).some((p) => p.subagent === spec.agent.name && p.immediate);
      if (!started && !waiting) await startOne(run, side, spec);
    }
  }
}

async function startOne(run: Run, side: Side, spec: SubagentSpec): Promise<void> {
  const options = typeof spec.config.immediate === 'object' ? spec.config.immediate : {};
  const value = (name: string | undefined) => (name ? (run.scope.get(name) ?? run.services.env[name]) : undefined);
  const values: Record<string, string> = {};
  for (const name of options.scopedEnv ?? []) {
    const v = value(name);
    if (v !== undefined) values[name] = v;
  }
  const opening = run.messages.find((m) => m.seq >= run.sessionStartSeq && m.role === 'user');
  const result = await start(run, side, {
    spec,
    name: value(options.nameEnv) ?? spec.agent.name,
    description: value(options.descriptionEnv) ?? spec.agent.definition.toolDescription ?? '',
    // The parent's arguments have the parent's shape, not the child's: the child starts with none.
    args: {},
    ...(spec.resumable ? {} : { message: opening ? textOf(opening.content) : '' }),
    values,
    blocking: spec.blocking,
    immediate: true,
  });
  // What a blocking start returned (or why it could not start) is the parent's to read at its first step.
  if (spec.blocking && !spec.resumable) {
    await storeMessage(run, side, threadState(run, side), {
      role: 'user',
      content: `The subagent ${spec.agent.name} ran first. ${result.status === 'success' ? `Its result:\n${result.result ?? ''}` : `It failed: ${result.error ?? ''}`}`,
      meta: { immediate: spec.agent.name },
    });
  } else if (result.status === 'error') {
    await storeMessage(run, side, threadState(run, side), {
      role: 'user',
      content: `The subagent ${spec.agent.name} could not start: ${result.error ?? ''}`,
      meta: { immediate: spec.agent.name },
    });
  }
}
