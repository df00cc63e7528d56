/**
 * The parent's registry of its subagent instances, kept in the parent
 * thread's meta, and what a child thread records about itself. A child's
 * status is read live: `running` while a session of it runs in this process.
 */
import type { SubagentRegistryEntry, ThreadView } from '../../definitions/types.js';
import type { ThreadRecord } from '../../store/types.js';
import type { Run, Services, Side } from '../run/types.js';
import { pageOf } from '../state/messagePages.js';
import { SUBAGENT_CREATE, type SubagentSpec } from '../tools/toolset.js';

const CHILDREN_META = 'children';
const SUBAGENT_META = 'subagent';

/** One instance, as the parent thread stores it. */
export interface ChildRecord {
  reference: string;
  name: string;
  agent: string;
  description: string;
  resumable: boolean;
  blocking: boolean;
  parentCommunication: 'implicit' | 'explicit';
  receives: 'side_a' | 'side_b';
  /** The parent's side that started it: its messages go there. */
  parentSide: 'a' | 'b';
  /** Started by `immediate`. */
  immediate?: boolean;
  terminated?: boolean;
  /** Microseconds since the epoch. */
  createdAt: number;
}

/** What a child thread stores about itself (meta `subagent`). */
export type SubagentMeta = Pick<
  ChildRecord,
  'name' | 'agent' | 'receives' | 'parentCommunication' | 'resumable' | 'blocking' | 'parentSide'
>;

export function childRecords(meta: Record<string, unknown> | undefined): ChildRecord[] {
  const value = meta?.[CHILDREN_META];
  return Array.isArray(value) ? (value as ChildRecord[]) : [];
}

export function subagentMetaOf(thread: ThreadRecord): SubagentMeta | undefined {
  const value = thread.meta?.[SUBAGENT_META];
  return typeof value === 'object' && value !== null ? (value as SubagentMeta) : undefined;
}

export function subagentThreadMeta(meta: SubagentMeta): Record<string, unknown> {
  return { [SUBAGENT_META]: meta };
}

/** A child by its reference or instance name. */
export function findChild(meta: Record<string, unknown> | undefined, referenceOrName: string): ChildRecord | undefined {
  const records = childRecords(meta);
  return records.find((r) => r.reference === referenceOrName) ?? records.find((r) => r.name === referenceOrName);
}

/** `researcher#2`: the agent's name and the instance's ordinal in this parent. */
export function instanceName(meta: Record<string, unknown> | undefined, agent: string): string {
  return `${agent}#${childRecords(meta).filter((r) => r.agent === agent).length + 1}`;
}

export function statusOf(services: Services, record: Pick<ChildRecord, 'reference' | 'terminated'>): SubagentRegistryEntry['status'] {
  if (record.terminated) return 'terminated';
  return services.activeRuns.has(record.reference) ? 'running' : 'idle';
}

export function entryOf(services: Services, record: ChildRecord): SubagentRegistryEntry {
  return {
    reference: record.reference,
    name: record.name,
    agent: record.agent,
    description: record.description,
    status: statusOf(services, record),
    resumable: record.resumable,
    blocking: record.blocking,
    parentCommunication: record.parentCommunication,
    createdAt: record.createdAt,
  };
}

/** Adds an instance to the parent's registry; the parent run sees it at once. */
export async function addChild(parent: Run, record: ChildRecord): Promise<void> {
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => ({
    ...meta,
    [CHILDREN_META]: [...childRecords(meta), record],
  }));
}

/** Marks an instance terminated in its parent's registry. */
export async function markTerminated(services: Services, parentId: string, reference: string): Promise<void> {
  await services.patchThreadMeta(parentId, (meta) => ({
    ...meta,
    [CHILDREN_META]: childRecords(meta).map((r) => (r.reference === reference ? { ...r, terminated: true } : r)),
  }));
  const parentRun = services.activeRuns.get(parentId);
  if (parentRun) parentRun.thread = (await services.store.getThread(parentId)) ?? parentRun.thread;
}

/** A read view of another thread (a parent or a child). */
export async function threadView(services: Services, threadId: string, name?: string): Promise<ThreadView | undefined> {
  const { store } = services;
  const thread = await store.getThread(threadId);
  if (!thread) return undefined;
  const terminated = thread.meta?.terminatedAt !== undefined;
  return {
    threadId,
    agentId: thread.prompt,
    ...(name ? { name } : {}),
    status: statusOf(services, { reference: threadId, terminated }),
    async getMessages(options = {}) {
      return pageOf(await store.listMessages(threadId), options);
    },
    async getValue<T>(key: string) {
      const fresh = await store.getThread(threadId);
      const values = fresh?.meta?.values as Record<string, unknown> | undefined;
      return values?.[key] as T | undefined;
    },
    async readFile(path: string) {
      return (await store.readFile(threadId, path))?.data ?? null;
    },
  };
}

/** Instances of a subagent that count toward its maxInstances: live ones, and ones waiting for variables. */
function instancesOf(meta: Record<string, unknown> | undefined, agent: string): number {
  const live = childRecords(meta).filter((r) => r.agent === agent && !r.terminated).length;
  const waiting = Object.values(pendingOf(meta)).filter((p) => p.subagent === agent).length;
  return live + waiting;
}

/** Whether a name is taken by an instance or a pending request in this thread. */
export function nameTaken(meta: Record<string, unknown> | undefined, name: string): boolean {
  return findChild(meta, name) !== undefined || Object.values(pendingOf(meta)).some((p) => p.name === name);
}

/** `maxInstances` reached: subagent_create no longer starts this subagent. */
export function atMaxInstances(meta: Record<string, unknown> | undefined, spec: SubagentSpec): boolean {
  const max = spec.resumable ? spec.resumable.maxInstances : undefined;
  return max !== undefined && instancesOf(meta, spec.agent.name) >= max;
}

/** Whether a tool is offered in this step (subagent_create disappears once every subagent it starts is at maxInstances). */
export function offeredNow(run: Run, tool: { name: string }, side: Side): boolean {
  if (tool.name !== SUBAGENT_CREATE) return true;
  const create = side.toolset.find((t) => t.name === SUBAGENT_CREATE);
  return create?.kind !== 'lifecycle' || create.subagents.some((spec) => !atMaxInstances(run.thread.meta, spec));
}

// -- pending requests for variables (see envRequests.ts), kept in the parent's meta beside the registry

export const PENDING_META = 'pendingSubagents';

export interface NeededVariable {
  name: string;
  description: string;
  type: 'secret' | 'text';
}

/** A deferred instance waiting for its variables. */
export interface PendingRequest {
  id: string;
  subagent: string;
  name: string;
  description: string;
  args: Record<string, unknown>;
  message?: string;
  attachments?: readonly string[];
  blocking: boolean;
  immediate?: boolean;
  needed: NeededVariable[];
}

export function pendingOf(meta: Record<string, unknown> | undefined): Record<string, PendingRequest> {
  const value = meta?.[PENDING_META];
  return typeof value === 'object' && value !== null ? (value as Record<string, PendingRequest>) : {};
}
