import { hasCode } from '../../errors.js';
import type { Store, ThreadRecord } from '../../store/types.js';
import type { Services } from './types.js';

/**
 * A thread is `idle` between turns; only an unusual end (failed, cancelled)
 * is written, so a normal turn costs no extra write.
 */
export async function recordStatus(store: Store, thread: ThreadRecord, status: ThreadRecord['status']): Promise<void> {
  if (thread.status !== status) await store.updateThread(thread.id, { status });
}

/**
 * After a run threw: `cancelled` when the caller cancelled, otherwise
 * `failed`. The meta is patched from a fresh read (other actors may have
 * written it since the run began). Never throws itself.
 */
export async function recordThrown(
  services: Pick<Services, 'store' | 'patchThreadMeta'>,
  threadId: string,
  error: unknown,
  sessionStartSeq?: number,
): Promise<void> {
  const cancelled = hasCode(error, 'CANCELLED');
  const interrupted = hasCode(error, 'INTERRUPTED');
  await services.store.updateThread(threadId, { status: cancelled ? 'cancelled' : interrupted ? 'interrupted' : 'failed' }).catch(() => {});
  if (cancelled) await services.patchThreadMeta(threadId, (meta) => ({ ...meta, cancelledAt: new Date().toISOString() })).catch(() => {});
  // Where the interrupted session began: the next call shows it to the model again.
  if (interrupted && sessionStartSeq !== undefined && Number.isFinite(sessionStartSeq)) {
    await services.patchThreadMeta(threadId, (meta) => ({ ...meta, [INTERRUPTED_FROM_META]: sessionStartSeq })).catch(() => {});
  }
}

/** Thread meta: the first seq of a session that was interrupted. */
export const INTERRUPTED_FROM_META = 'interruptedFromSeq';
