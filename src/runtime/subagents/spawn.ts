/**
 * Subagent instances: creating one (its own thread, linked to the parent and
 * listed in the parent's registry) and running its sessions, either while
 * the parent waits (blocking: the session's result is the tool result) or on
 * their own (non-blocking: the result reaches the parent as a message).
 */
import type { ToolResult } from '../../definitions/types.js';
import { AgentportError, errorMessage, hasCode } from '../../errors.js';
import type { NewMessage } from '../../store/types.js';
import { storeMessage } from '../loop/storeMessage.js';
import { openRun } from '../run/openRun.js';
import { recordThrown } from '../run/threadStatus.js';
import type { Run, SessionResult, Side } from '../run/types.js';
import { copyFilesAcross } from '../state/files.js';
import { threadState } from '../state/threadState.js';
import type { SubagentSpec } from '../tools/toolset.js';
import { deliverToParent, sessionReport } from './delivery.js';
import { addChild, entryOf, subagentThreadMeta, type ChildRecord } from './registry.js';

export interface SpawnRequest {
  spec: SubagentSpec;
  name: string;
  description: string;
  /** The arguments the instance starts with (state.arguments in the child). */
  args: Record<string, unknown>;
  /** Its first message; undefined for an instance that waits for messages (a resumable immediate one). */
  message?: string;
  /** Paths in the parent's files to hand over with the first message. */
  attachments?: readonly string[];
  /** Values stored with the child thread (scoped variables). */
  values?: Record<string, string>;
  blocking: boolean;
  immediate?: boolean;
}

/** Opens a new instance; MISSING_VARIABLES (nothing created) when its variables do not resolve. */
export async function spawn(parent: Run, side: Side, request: SpawnRequest): Promise<{ child: Run; record: ChildRecord }> {
  const { spec } = request;
  const receives = spec.resumable ? spec.resumable.receives : 'side_a';
  const controller = request.blocking ? undefined : new AbortController();
  const child = await openRun(parent.services, {
    target: spec.agent.name,
    agent: spec.agent,
    prompt: parent.services.registry.prompts.get(spec.agent.definition.sideA.prompt)!,
    args: request.args,
    userMessage: request.message ?? '',
    parent,
    ...(spec.config.env ? { configEnv: spec.config.env } : {}),
    ...(request.values ? { variables: request.values } : {}),
    threadMeta: subagentThreadMeta({
      name: request.name,
      agent: spec.agent.name,
      receives,
      parentCommunication: spec.parentCommunication,
      resumable: spec.resumable !== false,
      blocking: request.blocking,
    }),
    opening: [],
    firstSide: receives === 'side_b' ? 'b' : 'a',
    label: request.name,
    isolated: true,
    signal: controller?.signal ?? parent.signal,
    progress: request.blocking ? parent.progress : () => {},
  });
  if (controller) parent.services.detached.set(child.thread.id, controller);
  const record: ChildRecord = {
    reference: child.thread.id,
    name: request.name,
    agent: spec.agent.name,
    description: request.description,
    resumable: spec.resumable !== false,
    blocking: request.blocking,
    parentCommunication: spec.parentCommunication,
    receives,
    ...(request.immediate ? { immediate: true } : {}),
    createdAt: Date.parse(child.thread.createdAt) * 1000,
  };
  if (request.message !== undefined) {
    try {
      await openWith(parent, child, record, request.message, request.attachments ?? []);
    } catch (error) {
      // Nothing was handed over: the instance is not registered, its thread records the failure.
      await recordThrown(parent.services.store, child.thread, error);
      parent.services.detached.delete(child.thread.id);
      throw new AgentportError('INVALID_PATH', `cannot hand files to ${request.name}: ${errorMessage(error)}`);
    }
  }
  await addChild(parent, record);
  await side.hooks.notify('after_subagent_created', threadState(parent, side), entryOf(parent.services, record));
  return { child, record };
}

/** Opens a session of an existing instance with a message from its parent. */
export async function reopen(parent: Run, record: ChildRecord, message: string, attachments: readonly string[], blocking: boolean): Promise<Run> {
  const { services } = parent;
  const thread = await services.store.getThread(record.reference);
  const agent = services.registry.agents.get(record.agent);
  if (!thread || !agent) throw new Error(`subagent "${record.name}" (${record.reference}) no longer exists`);
  const controller = blocking ? undefined : new AbortController();
  const child = await openRun(services, {
    target: agent.name,
    agent,
    prompt: services.registry.prompts.get(agent.definition.sideA.prompt)!,
    args: (thread.meta?.arguments ?? {}) as Record<string, unknown>,
    userMessage: '',
    existing: thread,
    parent,
    opening: [],
    firstSide: record.receives === 'side_b' ? 'b' : 'a',
    label: record.name,
    isolated: true,
    signal: controller?.signal ?? parent.signal,
    progress: blocking ? parent.progress : () => {},
  });
  if (controller) services.detached.set(child.thread.id, controller);
  await openWith(parent, child, record, message, attachments);
  return child;
}

/**
 * Stores a parent's message in the child: to side A as the user, or to side B
 * as side A speaking (`receives_messages: 'side_b'`), with the handed-over
 * files copied into the child's /attachments/.
 */
async function openWith(parent: Run, child: Run, record: ChildRecord, text: string, attachments: readonly string[]): Promise<void> {
  const message = await parentMessage(parent, child, record, text, attachments);
  const stored = await storeMessage(child, child.sides.a, threadState(child, child.sides.a), message);
  child.sessionStartSeq = Math.min(child.sessionStartSeq, stored.seq);
}

/** The message as the child stores it; queued to a busy child the same way. */
export async function parentMessage(parent: Run, child: Pick<Run, 'services' | 'thread'>, record: ChildRecord, text: string, attachments: readonly string[]): Promise<NewMessage> {
  const copied = attachments.length ? await copyFilesAcross(parent.services.store, parent.thread.id, child.thread.id, attachments) : [];
  // Paths the text names are rewritten to the child's copies; the others are listed after it.
  let content = text;
  const unnamed: string[] = [];
  copied.forEach((ref, i) => {
    const original = JSON.stringify(attachments[i]!);
    if (content.includes(original)) content = content.split(original).join(JSON.stringify(ref.path));
    else unnamed.push(ref.path);
  });
  if (unnamed.length) content += `\n\nFiles: ${unnamed.join(', ')}`;
  return { role: record.receives === 'side_b' ? 'assistant' : 'user', side: 'a', content, meta: { from: parent.thread.id } };
}

/**
 * Runs an opened session of an instance. Blocking: waits and returns the
 * result as a tool result. Otherwise it runs on its own and the tool result
 * says so; with implicit communication its result is sent to the parent.
 */
export async function runInstance(parent: Run, child: Run, record: ChildRecord, blocking: boolean): Promise<ToolResult> {
  const { services } = parent;
  if (blocking) return resultOf(parent, child, await services.engine.runToCompletion(child));
  void services.engine
    .runToCompletion(child)
    .then(async (result) => {
      if (record.parentCommunication === 'implicit') {
        await deliverToParent(services, child.thread, sessionReport(result), { replyExpected: false, ...(result.attachments ? { attachments: result.attachments } : {}) });
      }
    })
    .catch((error: unknown) => {
      if (!hasCode(error, 'CANCELLED')) services.log(`subagent "${record.name}" (${record.reference}) failed: ${child.redactor.text(String(error))}`);
    })
    .finally(() => services.detached.delete(child.thread.id));
  return {
    status: 'success',
    result:
      `Started "${record.name}" (reference ${record.reference}). It works on its own: ` +
      (record.parentCommunication === 'implicit'
        ? 'its result will arrive as a message in this conversation when it finishes. You do not need to wait for it.'
        : 'it reports back only when it chooses to, as a message in this conversation.'),
  };
}

/** A blocking session's outcome as the parent's tool result; its files are copied into the parent's. */
async function resultOf(parent: Run, child: Run, result: SessionResult): Promise<ToolResult> {
  if (result.error) return { status: 'error', error: result.error.message };
  if (!result.attachments?.length) return { status: 'success', result: result.text };
  const refs = await copyFilesAcross(parent.services.store, child.thread.id, parent.thread.id, result.attachments);
  return { status: 'success', result: `${result.text}\n\nFiles: ${refs.map((ref) => ref.path).join(', ')}`, attachments: refs };
}
