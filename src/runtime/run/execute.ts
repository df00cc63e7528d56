/**
 * Runs an opened run's session to its end and records the outcome on the
 * thread: `idle` after a normal end, `failed` after an error result,
 * `cancelled` when the caller cancelled, `completed` once terminated.
 */
import { hasCode } from '../../errors.js';
import { runSession } from '../agents/session.js';
import { recordStatus } from './threadStatus.js';
import type { Run, SessionResult } from './types.js';

export async function runToCompletion(run: Run): Promise<SessionResult> {
  const { store, activeRuns } = run.services;
  activeRuns.set(run.thread.id, run);
  try {
    const result = await runSession(run);
    await recordStatus(store, run.thread, run.execution.terminated ? 'completed' : result.error ? 'failed' : 'idle');
    return result;
  } catch (error) {
    const cancelled = hasCode(error, 'CANCELLED');
    await store
      .updateThread(run.thread.id, {
        status: cancelled ? 'cancelled' : 'failed',
        meta: { ...run.thread.meta, ...(cancelled ? { cancelledAt: new Date().toISOString() } : {}) },
      })
      .catch(() => {});
    throw run.redactor.error(error);
  } finally {
    run.finished = true;
    if (activeRuns.get(run.thread.id) === run) activeRuns.delete(run.thread.id);
  }
}
