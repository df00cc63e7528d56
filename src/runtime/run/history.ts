/**
 * A continued thread's earlier turns are read from the store only when the
 * run needs them, so a turn of a long thread costs what its context needs,
 * not the whole history (a prompt without `includeChat` reads nothing old).
 */
import type { StoredMessage } from '../../store/types.js';
import type { Run } from './types.js';

/** Whether opening a run on this thread needs its earlier messages at once. */
export function needsHistoryAtOpen(run: Pick<Run, 'sides' | 'thread' | 'services'>): boolean {
  const { sides, thread, services } = run;
  const includesChat = [sides.a, sides.b].some((side) => side?.prompt.definition.includeChat === true);
  // An interrupted (or crashed) turn is shown to the model again: it must be read.
  const interrupted = thread.status === 'interrupted' || (thread.status === 'running' && !services.activeRuns.has(thread.id));
  return includesChat || interrupted;
}

/**
 * Makes `run.messages` hold the whole thread: the earlier messages are read
 * and put before the run's own. Messages still being stored by the run (a
 * tool result on its way) are not taken from the read: they arrive through
 * the run as usual, so nothing shows twice.
 */
export async function loadHistory(run: Run): Promise<StoredMessage[]> {
  if (run.history) return run.messages;
  const stored = await run.services.store.listMessages(run.thread.id);
  const own = run.messages.length ? Math.min(...run.messages.map((m) => m.seq)) : Number.POSITIVE_INFINITY;
  const before = Math.min(own, run.sessionStartSeq);
  // Re-checked after the await: another caller may have loaded it meanwhile.
  if (!run.history) {
    run.messages = [...stored.filter((m) => m.seq < before), ...run.messages];
    run.history = true;
  }
  return run.messages;
}
