import type { Store, ThreadRecord } from '../../store/types.js';

/**
 * A thread is `idle` between turns; only an unusual end (failed, cancelled)
 * is written, so a normal turn costs no extra write.
 */
export async function recordStatus(store: Store, thread: ThreadRecord, status: ThreadRecord['status']): Promise<void> {
  if (thread.status !== status) await store.updateThread(thread.id, { status });
}
