/**
 * A thread's lock taken without waiting, by code that asks whether the thread
 * is free (run handles, recovery at start, a run marking itself running): a
 * turn holding it is an answer, not a failure.
 */
import { hasCode, type AgentportError } from '../../errors.js';
import type { Store } from '../../store/types.js';

/**
 * The release of the thread's lock, taken now; `undefined` when another turn holds it (THREAD_BUSY). Any other
 * failure (a database out of reach, a data folder the system refuses) is thrown as the store gave it: a lock that
 * could not be asked for says nothing about who runs the thread. A store without locks (one process) gives a release
 * that does nothing.
 */
export async function lockAtOnce(
  store: Store,
  threadId: string,
  onLost?: (error: AgentportError) => void,
): Promise<(() => Promise<void>) | undefined> {
  if (!store.lockThread) return async () => {};
  try {
    return await store.lockThread(threadId, 0, onLost);
  } catch (error) {
    if (hasCode(error, 'THREAD_BUSY')) return undefined;
    throw error;
  }
}
