/**
 * Runs an opened run's session to its end and records the outcome on the
 * thread: `idle` after a normal end, `failed` after an error result,
 * `cancelled` when the caller cancelled, `completed` once terminated.
 */
import { AgentportError, errorMessage, hasCode, isAgentportError, lostLock } from '../../errors.js';
import { runSession } from '../agents/session.js';
import { writeOpening } from '../loop/storeMessage.js';
import { lockAtOnce } from './lockAtOnce.js';
import { INTERRUPTED_FROM_META, recordStatus, recordThrown } from './threadStatus.js';
import type { Run, SessionResult } from './types.js';

/** How long a run goes before it is marked running in the store. */
const RUNNING_MARK_AFTER_MS = 500;

export function runToCompletion(run: Run): Promise<SessionResult> {
  const done = execute(run);
  run.ended = done.catch(() => {});
  return done;
}

async function execute(run: Run): Promise<SessionResult> {
  const { store, activeRuns, lostLocks } = run.services;
  activeRuns.set(run.thread.id, run);
  // The turn's lock was lost while the run was opening: it stops before its first step (see withThreadLock).
  const lost = lostLocks.get(run.thread.id);
  if (lost) run.abort(lost);
  // A run still going after a moment is marked running (off the reply path): a process that dies
  // then leaves a trace the next call reads. Quick runs cost no write.
  let marking: Promise<unknown> | undefined;
  // With the mark, the thread's lock (unless this turn holds it already): other processes then know it is alive.
  let locking: Promise<(() => Promise<void>) | undefined> | undefined;
  /** Why the store could not take the lock (not THREAD_BUSY: this turn's own), when it could not. */
  let lockFailure: unknown;
  const takeLock = () =>
    // Lost while held (THREAD_LOCK_LOST), another process may take the thread: the run stops.
    lockAtOnce(store, run.thread.id, (error) => run.abort(error)).then(
      (release) => {
        lockFailure = undefined;
        return release;
      },
      (error: unknown) => {
        lockFailure = error;
        return undefined;
      },
    );
  const markRunning = async (options: { handedOver?: boolean } = {}) => {
    if (!run.finished && !marking) {
      marking = store.updateThread(run.thread.id, { status: 'running' }).catch((error: unknown) =>
        // The run goes on; what is lost is the trace a crash would leave, so the operator is told.
        run.services.log(
          `thread ${run.thread.id}: could not record it as running (${errorMessage(error)}); the run goes on, but should this process stop before it ends, the thread will not show the turn as interrupted`,
        ),
      );
      locking = takeLock();
    } else if (options.handedOver && lockFailure !== undefined && !run.finished) {
      // Failed at the mark: tried again now that the run goes on without its caller.
      locking = takeLock();
    }
    await Promise.all([marking, locking]);
    if (lockFailure === undefined) return;
    // A run its caller still waits for is known to nobody else yet (a first turn's thread, a sub-prompt's): it goes
    // on. One handed over to the background must hold the lock, or other processes would take it for idle.
    if (options.handedOver) {
      throw isAgentportError(lockFailure)
        ? lockFailure
        : new AgentportError('INTERNAL', errorMessage(lockFailure), undefined, { cause: lockFailure });
    }
    run.services.log(`thread ${run.thread.id}: its lock could not be taken (${errorMessage(lockFailure)}); the run goes on`);
  };
  run.markRunning = markRunning;
  const mark = setTimeout(() => void markRunning().catch(() => {}), RUNNING_MARK_AFTER_MS);
  mark.unref();
  let ended = false;
  try {
    const result = await runSession(run);
    clearTimeout(mark);
    const status = run.execution.terminated ? 'completed' : result.error ? 'failed' : 'idle';
    // A run that stored nothing after its opening messages writes them now: its caller gets the thread's id.
    if (run.openingWaits) await writeOpening(run);
    // Once marked, the final status is written whatever the cached record says (a meta write may have replaced it).
    if (marking) {
      await marking;
      await store.updateThread(run.thread.id, { status });
    } else if (run.thread.status !== status) await recordStatus(store, run.thread, status);
    if (run.thread.meta?.[INTERRUPTED_FROM_META] !== undefined) {
      // The interrupted turn has been taken up: it is not shown again.
      await run.services.patchThreadMeta(run.thread.id, ({ [INTERRUPTED_FROM_META]: _done, ...meta }) => meta).catch(() => {});
    }
    ended = true;
    return result;
  } catch (error) {
    clearTimeout(mark);
    await marking;
    // A run fenced off its thread writes nothing more to it: the thread may be another process's now.
    if (!lostLock(error, run.thread.id)) await recordThrown(run.services, run.thread.id, error, run.sessionStartSeq);
    throw run.redactor.error(error);
  } finally {
    clearTimeout(mark);
    if (locking) await (await locking)?.().catch(() => {});
    run.finished = true;
    if (activeRuns.get(run.thread.id) === run) activeRuns.delete(run.thread.id);
    handOverQueue(run, ended);
  }
}

/**
 * Messages queued in the session's last step had no next step to reach: they
 * start a turn of their own once this one is over. A queued tool call needs
 * a running turn, so it is reported and dropped.
 */
function handOverQueue(run: Run, ended: boolean): void {
  const { services } = run;
  const items = run.queue.splice(0);
  const messages = items.filter((item) => item.kind === 'message');
  // A run that failed or was cancelled keeps what it was sent in the thread, without starting a turn.
  for (const item of items) {
    if (run.execution.terminated) services.log(`thread ${run.thread.id} was terminated: a queued ${item.kind} was not delivered`);
    else if (item.kind === 'tool')
      services.log(`queued tool call ${item.name} on thread ${run.thread.id} did not run: the session ended first`);
  }
  if (run.execution.terminated || messages.length === 0) return;
  if (ended) for (const item of messages) services.startQueuedTurn(run.thread.id, item.message);
  else if (run.signal.aborted && hasCode(run.signal.reason, 'THREAD_LOCK_LOST'))
    services.log(`thread ${run.thread.id} lost its lock: ${messages.length} queued message(s) were not stored`);
  else
    void Promise.all(messages.map((item) => services.store.appendMessage(run.thread.id, run.redactor.deep(item.message)))).catch(
      (error: unknown) => services.log(`queued messages of thread ${run.thread.id} were lost: ${String(error)}`),
    );
}
