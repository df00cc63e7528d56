/**
 * The parent's registry of its subagent instances, kept in the parent
 * thread's meta, and what a child thread records about itself. A child's
 * status is read live: `running` while a session of it runs in this process.
 */
import type { SubagentRegistryEntry, ThreadView } from '../../definitions/types.js';
import type { ThreadRecord } from '../../store/types.js';
import type { Run, Services } from '../run/types.js';

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
  /** Started by `immediate`. */
  immediate?: boolean;
  terminated?: boolean;
  /** Microseconds since the epoch. */
  createdAt: number;
}

/** What a child thread stores about itself (meta `subagent`). */
export type SubagentMeta = Pick<ChildRecord, 'name' | 'agent' | 'receives' | 'parentCommunication' | 'resumable' | 'blocking'>;

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
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => ({ ...meta, [CHILDREN_META]: [...childRecords(meta), record] }));
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
      const all = await store.listMessages(threadId);
      const ordered = options.order === 'desc' ? all.reverse() : all;
      const offset = Math.max(0, options.offset ?? 0);
      const end = options.limit === undefined ? ordered.length : offset + Math.max(0, options.limit);
      return { messages: ordered.slice(offset, end), total: all.length, hasMore: end < ordered.length };
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
