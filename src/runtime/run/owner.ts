/**
 * Who a thread belongs to. With OAuth (`serve --http --auth oauth`) every
 * thread records the subject (`sub`) of the token that created it in its
 * meta (`owner`), and sub-prompt and subagent threads inherit it from their
 * parent. The runtime's lookups of an existing thread (continuing it, run
 * handles and tasks, variable requests) go through {@link visibleThread}: a
 * thread of another subject is reported exactly like a thread that does not
 * exist, so ids cannot be probed.
 *
 * The caller is the subject of the request being served: the HTTP layer
 * runs each authenticated request inside {@link asCaller}, and everything
 * that request starts (its run, a run_wait, a tasks/get) sees it through
 * {@link currentCaller}. With no caller (stdio, the static AGENTPORT_TOKEN,
 * the CLI) every thread is visible: there is one user.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Store, ThreadRecord } from '../../store/types.js';

/** Thread meta: the subject the thread belongs to. */
const OWNER_META = 'owner';

const callers = new AsyncLocalStorage<string | undefined>();

/** Runs `work` (and everything it starts) on behalf of `subject`. */
export function asCaller<T>(subject: string | undefined, work: () => T): T {
  // Nobody's, where nobody's already: the storage is not entered. On Node 20 entering one turns on promise hooks
  // for the whole process, which cost every call about a tenth of its time on a server with one user.
  if (subject === undefined && callers.getStore() === undefined) return work();
  return callers.run(subject, work);
}

/** The subject of the request being served, when it is authenticated per user. */
export function currentCaller(): string | undefined {
  return callers.getStore();
}

export function ownerOf(thread: Pick<ThreadRecord, 'meta'> | undefined): string | undefined {
  const owner = thread?.meta?.[OWNER_META];
  return typeof owner === 'string' ? owner : undefined;
}

/**
 * Whether `caller` may see the thread. Without a caller, yes; with one, only
 * its own threads (a thread created without OAuth has no owner and is not
 * visible to OAuth users).
 */
export function visibleTo(thread: Pick<ThreadRecord, 'meta'>, caller: string | undefined = currentCaller()): boolean {
  return reachable(ownerOf(thread), caller);
}

/** The one rule: no caller sees everything; a caller sees what it owns. */
export function reachable(owner: string | undefined, caller: string | undefined = currentCaller()): boolean {
  return caller === undefined || owner === caller;
}

/**
 * The thread when it exists and the caller may see it; otherwise undefined. A store that cannot say
 * (damaged data, a database out of reach) throws its own error: a thread is never reported missing
 * because it could not be read.
 */
export async function visibleThread(
  store: Store,
  threadId: string,
  caller: string | undefined = currentCaller(),
): Promise<ThreadRecord | undefined> {
  const thread = await store.getThread(threadId);
  return thread && visibleTo(thread, caller) ? thread : undefined;
}

/** The meta a new thread gets: its owner, when there is one. */
export function ownerMeta(owner: string | undefined): Record<string, string> {
  return owner === undefined ? {} : { [OWNER_META]: owner };
}
