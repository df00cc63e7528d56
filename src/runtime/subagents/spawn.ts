/**
 * Subagent instances: creating one (its own thread, linked to the parent and
 * listed in the parent's registry) and running its sessions, either while
 * the parent waits (blocking: the session's result is the tool result) or on
 * their own (non-blocking: the result reaches the parent as a message).
 * Sessions of one instance never overlap: a message to a busy instance waits
 * until its current session has ended.
 */
import { addUsage } from '../../models/usage.js';
import type { ToolResult } from '../../definitions/types.js';
import { AgentportError, errorMessage, isStop } from '../../errors.js';
import type { AttachmentRef, NewMessage } from '../../store/types.js';
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

/**
 * Creates an instance and, when it has a first message, runs its first
 * session. MISSING_VARIABLES (nothing created) when its variables do not
 * resolve; INVALID_PATH (not registered) when its files cannot be handed over.
 */
export async function startInstance(parent: Run, side: Side, request: SpawnRequest): Promise<{ record: ChildRecord; result: ToolResult }> {
  const { spec } = request;
  const receives = spec.resumable ? spec.resumable.receives : 'side_a';
  const child = await openRun(parent.services, {
    ...childSpec(parent, spec, request.name, request.blocking),
    args: request.args,
    ...(request.values ? { variables: request.values } : {}),
    threadMeta: subagentThreadMeta({
      name: request.name,
      agent: spec.agent.name,
      receives,
      parentCommunication: spec.parentCommunication,
      resumable: spec.resumable !== false,
      blocking: request.blocking,
      parentSide: side.key,
    }),
  });
  const record: ChildRecord = {
    reference: child.thread.id,
    name: request.name,
    agent: spec.agent.name,
    description: request.description,
    resumable: spec.resumable !== false,
    blocking: request.blocking,
    parentCommunication: spec.parentCommunication,
    receives,
    parentSide: side.key,
    ...(request.immediate ? { immediate: true } : {}),
    createdAt: Date.parse(child.thread.createdAt) * 1000,
  };
  if (request.message !== undefined) await handOver(parent, child, record, request.message, request.attachments ?? [], request.name);
  await addChild(parent, record);
  await side.hooks.notify('after_subagent_created', threadState(parent, side), entryOf(parent.services, record));
  if (request.message === undefined)
    return { record, result: { status: 'success', result: `"${record.name}" (reference ${record.reference}) is ready for messages.` } };
  return { record, result: await runSession(parent, record, request.blocking, async () => child) };
}

/** A parent's message to an existing instance: a session of its own, after any session running now. */
export async function messageInstance(
  parent: Run,
  record: ChildRecord,
  text: string,
  attachments: readonly string[],
  blocking: boolean,
): Promise<ToolResult> {
  const { services } = parent;
  const agent = services.registry.agents.get(record.agent);
  if (!agent) throw new AgentportError('UNKNOWN_TOOL', `the subagent ${record.agent} of "${record.name}" no longer exists`);
  const spec = { agent } as SubagentSpec;
  const open = async () => {
    const thread = await services.store.getThread(record.reference);
    if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `the thread of "${record.name}" (${record.reference}) no longer exists`);
    const child = await openRun(services, {
      ...childSpec(parent, spec, record.name, blocking),
      args: (thread.meta?.arguments ?? {}) as Record<string, unknown>,
      existing: thread,
      firstSide: record.receives === 'side_b' ? 'b' : 'a',
    });
    await handOver(parent, child, record, text, attachments, record.name);
    return child;
  };
  const busy = services.activeRuns.has(record.reference);
  const result = runSession(parent, record, blocking, open);
  if (busy && !blocking)
    return {
      status: 'success',
      result: `"${record.name}" is busy; it gets the message when its current session ends, and its answer will arrive as a message.`,
    };
  return result;
}

/** What every session of an instance shares: an isolated thread named after the instance. */
function childSpec(parent: Run, spec: SubagentSpec, name: string, blocking: boolean) {
  const { agent } = spec;
  return {
    target: agent.name,
    agent,
    prompt: parent.services.registry.prompts.get(agent.definition.sideA.prompt)!,
    userMessage: '',
    parent,
    ...(spec.config?.env ? { configEnv: spec.config.env } : {}),
    opening: [],
    firstSide: spec.resumable && spec.resumable.receives === 'side_b' ? ('b' as const) : ('a' as const),
    label: name,
    isolated: true,
    // A non-blocking instance outlives the call: neither its cancellation nor its progress (nor a form to ask with) applies.
    signal: blocking ? parent.signal : new AbortController().signal,
    progress: blocking ? parent.progress : () => {},
    ...(blocking && parent.elicit ? { elicit: parent.elicit } : {}),
  };
}

/**
 * Stores the parent's message in the child, with the handed-over files copied
 * into the child's /attachments/ and their paths rewritten. Nothing is
 * registered when this fails: the child's thread records the failure.
 */
async function handOver(
  parent: Run,
  child: Run,
  record: ChildRecord,
  text: string,
  attachments: readonly string[],
  name: string,
): Promise<void> {
  try {
    const { message, moved } = await parentMessage(parent, child, record, text, attachments);
    if (moved.size) {
      child.args = rewritePaths(child.args, moved);
      child.thread = await child.services.patchThreadMeta(child.thread.id, (meta) => ({ ...meta, arguments: child.args }));
    }
    const stored = await storeMessage(child, child.sides.a, threadState(child, child.sides.a), message);
    child.sessionStartSeq = Math.min(child.sessionStartSeq, stored.seq);
  } catch (error) {
    await recordThrown(child.services, child.thread.id, error);
    throw new AgentportError('INVALID_PATH', `cannot hand files to ${name}: ${errorMessage(error)}`);
  }
}

/**
 * The message as the child stores it: to side A as the user, or to side B as
 * side A speaking (`receives_messages: 'side_b'`).
 */
async function parentMessage(
  parent: Run,
  child: Run,
  record: ChildRecord,
  text: string,
  attachments: readonly string[],
): Promise<{ message: NewMessage; moved: Map<string, string> }> {
  const copied: AttachmentRef[] = attachments.length
    ? await copyFilesAcross(parent.services.store, parent.thread.id, child.thread.id, attachments)
    : [];
  const moved = new Map(copied.map((ref, i) => [attachments[i]!, ref.path] as const));
  let content = rewritePaths(text, moved);
  const unnamed = [...moved].filter(([from]) => !mentions(text, from)).map(([, to]) => to);
  if (unnamed.length) content += `\n\nFiles: ${unnamed.join(', ')}`;
  return {
    message: { role: record.receives === 'side_b' ? 'assistant' : 'user', side: 'a', content, meta: { from: parent.thread.id } },
    moved,
  };
}

/** A path as a whole word: not followed by more path characters. */
function pathPattern(path: string): RegExp {
  return new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w./-])`, 'g');
}

function mentions(text: string, path: string): boolean {
  return pathPattern(path).test(text);
}

/** Replaces handed-over paths with the receiving thread's, in text or inside arguments. */
function rewritePaths<T>(value: T, moved: ReadonlyMap<string, string>): T {
  if (moved.size === 0) return value;
  if (typeof value === 'string') {
    let out: string = value;
    for (const [from, to] of moved) out = out.replace(pathPattern(from), to);
    return out as T;
  }
  if (Array.isArray(value)) return value.map((item: unknown) => rewritePaths(item, moved)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewritePaths(v, moved)])) as T;
  return value;
}

/**
 * Runs one session of an instance, after any session of it running now.
 * Blocking: waits and returns the result as a tool result. Otherwise it runs
 * on its own and its result (or failure) is sent to the parent, with
 * implicit communication.
 */
function runSession(parent: Run, record: ChildRecord, blocking: boolean, open: () => Promise<Run>): Promise<ToolResult> {
  const { services } = parent;
  let opened: Run | undefined;
  const session = services.serialize(record.reference, async () => {
    opened = await open();
    return { child: opened, result: await services.engine.runToCompletion(opened) };
  });
  if (blocking) {
    return session.then(({ child, result }) => {
      // A blocking subagent works for its parent's run: what its model calls cost counts there.
      parent.tally.usage = addUsage(parent.tally.usage, child.tally.usage);
      return resultOf(parent, child, result);
    });
  }
  void session.then(
    async ({ child, result }) => {
      if (record.parentCommunication === 'implicit') {
        await deliverToParent(services, child.thread, sessionReport(result), {
          replyExpected: false,
          ...(result.attachments ? { attachments: result.attachments } : {}),
        });
      }
    },
    async (error: unknown) => {
      services.log(
        `subagent "${record.name}" (${record.reference}) stopped: ${opened ? opened.redactor.text(errorMessage(error)) : errorMessage(error)}`,
      );
      // The parent was told a result would come: it hears that none will.
      const thread = opened?.thread ?? (await services.store.getThread(record.reference));
      if (thread && record.parentCommunication === 'implicit' && !isStop(error)) {
        await deliverToParent(services, thread, `It stopped without a result: ${errorMessage(error)}`, { replyExpected: false }).catch(
          () => {},
        );
      }
    },
  );
  return Promise.resolve({
    status: 'success',
    result:
      `Started "${record.name}" (reference ${record.reference}). It works on its own: ` +
      (record.parentCommunication === 'implicit'
        ? 'its result will arrive as a message in this conversation when it finishes. You do not need to wait for it.'
        : 'it reports back only when it chooses to, as a message in this conversation.'),
  });
}

/** A blocking session's outcome as the parent's tool result; its files are copied into the parent's. */
async function resultOf(parent: Run, child: Run, result: SessionResult): Promise<ToolResult> {
  if (result.error) return { status: 'error', error: result.error.message };
  if (!result.attachments?.length) return { status: 'success', result: result.text };
  const refs = await copyFilesAcross(parent.services.store, child.thread.id, parent.thread.id, result.attachments);
  return { status: 'success', result: `${result.text}\n\nFiles: ${refs.map((ref) => ref.path).join(', ')}`, attachments: refs };
}
