import { hasCode } from '../../errors.js';
import type { Store, ThreadRecord } from '../../store/types.js';

/**
 * A thread is `idle` between turns; only an unusual end (failed, cancelled)
 * is written, so a normal turn costs no extra write.
 */
export async function recordStatus(store: Store, thread: ThreadRecord, status: ThreadRecord['status']): Promise<void> {
  if (thread.status !== status) await store.updateThread(thread.id, { status });
}

/** After a run threw: `cancelled` when the caller cancelled, otherwise `failed`. Never throws itself. */
export async function recordThrown(store: Store, thread: ThreadRecord, error: unknown): Promise<void> {
  const cancelled = hasCode(error, 'CANCELLED');
  await store
    .updateThread(thread.id, {
      status: cancelled ? 'cancelled' : 'failed',
      meta: { ...thread.meta, ...(cancelled ? { cancelledAt: new Date().toISOString() } : {}) },
    })
    .catch(() => {});
}
