/**
 * Run handles: a call that outlives the caller's patience (the server's call
 * budget) goes on in the background and is reached by thread id through
 * run_wait, run_status and run_cancel. While it runs, this process keeps its
 * promise and latest progress; its outcome is then stored with the thread
 * (meta `lastRun`) so run_wait answers from the store after a restart. A
 * thread left `running` by a process that is gone is reported interrupted.
 *
 * A thread continued while its earlier run is still in the background has
 * several runs here, in turn order: run_wait gives each one's outcome once,
 * oldest first (none is lost), run_status reports the one run_wait is on, and
 * run_cancel stops them all.
 *
 * A detached run may also carry an id of its own (an MCP task): its record
 * is written with the thread (meta `runs`) before `detach` returns, so the id
 * answers at once, from any process, and after a restart; it then keeps the
 * run's outcome even when the thread goes on with later turns.
 */
import { randomBytes } from 'node:crypto';
import { AgentportError, errorInfo, type ErrorInfo } from '../../errors.js';
import type { RunResult } from '../types.js';
import { lockAtOnce } from './lockAtOnce.js';
import { currentCaller, ownerOf, reachable, visibleThread } from './owner.js';
import type { Services } from './types.js';
import { RUN_RECORD_TTL_MS } from '../limits.js';

/** Where a run stands, as run_wait / run_status / run_cancel report it. */
export interface RunView {
  threadId: string;
  /** The run's own id, when it was detached with one. */
  id?: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
  /** The latest progress message, while running. */
  progress?: string;
  startedAt?: string;
  /** When the status or progress last changed. */
  updatedAt?: string;
  /** The outcome, once it ended. */
  result?: RunResult;
  error?: ErrorInfo;
}

interface Handle {
  threadId: string;
  id: string | undefined;
  /** The thread's owner (run/owner.ts): other subjects are told the run does not exist. */
  owner: string | undefined;
  startedAt: string;
  updatedAt: string;
  progress: string | undefined;
  done: Promise<RunResult>;
  settled: RunView | undefined;
  /** run_wait has returned its outcome: the thread's next run is the one reported from then on. */
  delivered: boolean;
  cancel: () => void;
}

const LAST_RUN_META = 'lastRun';
const RUNS_META = 'runs';
/** At most this many run records per thread (the oldest go first). */
const RUN_RECORDS_KEPT = 50;

type RunRecord = Omit<RunView, 'threadId' | 'id' | 'progress'>;
/** How long a finished run stays in memory before run_wait answers from the store. */
const SETTLED_KEPT_MS = 10 * 60_000;
/** The longest a single run_wait waits. */
const MAX_WAIT_MS = 50_000;

export class RunHandles {
  /** The runs of each thread held here, in turn order. */
  private readonly handles = new Map<string, Handle[]>();
  private readonly byId = new Map<string, Handle>();
  /** The run each view handed out reports on (pendingAfter counts the runs after it). */
  private readonly viewed = new WeakMap<RunView, Handle>();

  constructor(private readonly services: Services) {}

  /**
   * Keeps a run that a caller stopped waiting for. Returns the sink for its
   * progress from now on.
   */
  async detach(
    threadId: string,
    done: Promise<RunResult>,
    cancel: () => void,
    options: { withId?: boolean } = {},
  ): Promise<{ id: string | undefined; progress: (message: string) => void }> {
    const at = new Date().toISOString();
    const id = options.withId ? `${threadId}.${randomBytes(6).toString('hex')}` : undefined;
    const active = this.services.activeRuns.get(threadId);
    const handle: Handle = {
      threadId,
      id,
      // A run not started yet is its caller's: the caller owns the thread, or could not have continued it.
      owner: active ? ownerOf(active.thread) : currentCaller(),
      startedAt: at,
      updatedAt: at,
      progress: undefined,
      done,
      settled: undefined,
      delivered: false,
      cancel,
    };
    const runs = this.handles.get(threadId);
    if (runs) runs.push(handle);
    else this.handles.set(threadId, [handle]);
    // Durable before the id is handed out: any process can answer for it from now on.
    if (id) this.byId.set(id, handle);
    const recorded = id ? this.writeRecord(handle, { status: 'running', startedAt: at, updatedAt: at }) : Promise.resolve();
    // Settled once the run ends, after its running record (so the outcome's is written after it), whatever follows
    // here: a handle registered is never left running.
    void recorded
      .then(
        () => done,
        () => done,
      )
      .then(
        (result) => this.settle(handle, { threadId, status: result.error ? 'failed' : 'completed', result }),
        (error: unknown) =>
          this.settle(handle, {
            threadId,
            status: errorInfo(error).code === 'CANCELLED' ? 'cancelled' : 'failed',
            error: errorInfo(error),
          }),
      );
    try {
      await recorded;
      // A run that goes on without its caller holds the thread's lock across processes until it ends (a first turn
      // takes none while its caller waits). A running one is marked running now, taking the lock unless its turn
      // holds it (execute.ts): a process that dies leaves a trace the next one reads, and the thread is written
      // before its id is handed out. A lock the store fails to take stops the run (nobody else could tell that it
      // runs), and the caller gets the store's error.
      if (active) await active.markRunning?.({ handedOver: true });
      else {
        // Not started yet: a turn queued here may hold the lock already (THREAD_BUSY).
        const release = await lockAtOnce(this.services.store, threadId);
        if (release) void done.finally(() => release()).catch(() => {});
      }
    } catch (error) {
      cancel();
      throw error;
    }
    return {
      id,
      progress: (message) => {
        handle.progress = message;
        handle.updatedAt = new Date().toISOString();
      },
    };
  }

  /**
   * Where the run with this id stands: live in this process, else its stored record. `delivering`: the
   * answer gives the outcome to the caller (tasks/get), so run_wait on the thread goes on to the runs after it.
   */
  async get(id: string, options: { delivering?: boolean } = {}): Promise<RunView | undefined> {
    const handle = this.byId.get(id);
    if (handle && !this.visible(handle)) return undefined;
    if (handle) {
      if (handle.settled && options.delivering) handle.delivered = true;
      return this.view(handle);
    }
    const threadId = threadOfId(id);
    if (!threadId) return undefined;
    const thread = await visibleThread(this.services.store, threadId);
    const record = (thread?.meta?.[RUNS_META] as Record<string, RunRecord> | undefined)?.[id];
    if (!thread || !record) return undefined;
    if (record.status === 'running') {
      // Not held here: running in another process, or left by one that is gone.
      const live = thread.status === 'running' && !this.services.activeRuns.has(threadId) ? await this.unheld(threadId) : undefined;
      if (live?.status === 'running') return { ...record, threadId, id, ...(live.progress ? { progress: live.progress } : {}) };
      return { ...interrupted(threadId), id, startedAt: record.startedAt, updatedAt: record.updatedAt ?? record.startedAt };
    }
    return { ...record, threadId, id };
  }

  /** Stops the run with this id (without waiting for it to settle); false when it is not running here. */
  cancelById(id: string): boolean {
    const handle = this.byId.get(id);
    if (!handle || handle.settled || !this.visible(handle)) return false;
    handle.cancel();
    return true;
  }

  /**
   * The thread's run that run_wait and run_status report: the oldest whose outcome run_wait has not
   * given yet, else the latest.
   */
  private current(threadId: string): Handle | undefined {
    const runs = this.handles.get(threadId);
    const handle = runs?.find((run) => !run.delivered) ?? runs?.at(-1);
    return handle && this.visible(handle) ? handle : undefined;
  }

  /** Waits up to `timeoutMs` (at most 50 s) for the run's end. */
  async wait(threadId: string, timeoutMs: number): Promise<RunView> {
    const handle = this.current(threadId);
    if (!handle) return this.fromStore(threadId);
    return this.waitFor(handle, timeoutMs);
  }

  private async waitFor(handle: Handle, timeoutMs: number): Promise<RunView> {
    if (!handle.settled) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        handle.done.catch(() => {}),
        new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(timeoutMs, MAX_WAIT_MS))))),
      ]);
      clearTimeout(timer);
      // Let the settle callback run.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (handle.settled) handle.delivered = true;
    return this.view(handle);
  }

  async status(threadId: string): Promise<RunView> {
    const handle = this.current(threadId);
    return handle ? this.view(handle) : this.fromStore(threadId);
  }

  /** Stops every run of the thread held here (a turn queued behind the running one too); reports the one run_wait is on. */
  async cancel(threadId: string): Promise<RunView> {
    const handle = this.current(threadId);
    if (!handle) return this.fromStore(threadId);
    const running = (this.handles.get(threadId) ?? []).filter((run) => !run.settled && this.visible(run));
    if (running.length === 0) return this.waitFor(handle, 0);
    for (const run of running) run.cancel();
    await Promise.race([Promise.allSettled(running.map((run) => run.done)), delay(5_000)]);
    // Let the settle callbacks run.
    await new Promise((resolve) => setImmediate(resolve));
    // What was stopped is reported here; an outcome that came before it is still run_wait's to give.
    for (const run of running) if (run.settled) run.delivered = true;
    return this.view(running[0]!);
  }

  /** How many runs of the thread come after the one reported (for the result's instructions). */
  pendingAfter(threadId: string, view: RunView): number {
    const runs = this.handles.get(threadId) ?? [];
    const handle = this.viewed.get(view);
    const at = handle ? runs.indexOf(handle) : -1;
    return at < 0 ? 0 : runs.slice(at + 1).filter((run) => !run.delivered && this.visible(run)).length;
  }

  /** Whether the caller may reach this run (its thread's owner, or any caller without OAuth). */
  private visible(handle: Handle): boolean {
    return reachable(handle.owner);
  }

  private view(handle: Handle): RunView {
    const view: RunView = handle.settled ?? {
      threadId: handle.threadId,
      ...(handle.id ? { id: handle.id } : {}),
      status: 'running',
      startedAt: handle.startedAt,
      updatedAt: handle.updatedAt,
      ...(handle.progress ? { progress: handle.progress } : {}),
    };
    this.viewed.set(view, handle);
    return view;
  }

  private async settle(handle: Handle, ended: RunView): Promise<void> {
    const endedAt = new Date().toISOString();
    const view: RunView = { ...ended, ...(handle.id ? { id: handle.id } : {}), startedAt: handle.startedAt, updatedAt: endedAt };
    handle.settled = view;
    // Kept a while for run_wait; after that the stored outcome answers.
    setTimeout(() => {
      const runs = this.handles.get(handle.threadId);
      const at = runs?.indexOf(handle) ?? -1;
      if (runs && at >= 0) runs.splice(at, 1);
      if (runs?.length === 0) this.handles.delete(handle.threadId);
      if (handle.id && this.byId.get(handle.id) === handle) this.byId.delete(handle.id);
    }, SETTLED_KEPT_MS).unref();
    // A run fenced off its thread (its lock lost: another process may run the thread now) writes nothing more to it;
    // run_wait here still has its outcome, and elsewhere the thread reads as interrupted.
    if (view.error?.code === 'THREAD_LOCK_LOST' && view.error.data?.threadId === handle.threadId) return;
    const outcome = { status: view.status, ...(view.result ? { result: view.result } : {}), ...(view.error ? { error: view.error } : {}) };
    const lastRun = { ...outcome, endedAt };
    await this.services
      .patchThreadMeta(handle.threadId, (meta) => ({
        ...meta,
        [LAST_RUN_META]: lastRun,
        ...(handle.id ? { [RUNS_META]: withRecord(meta, handle.id, { ...outcome, startedAt: handle.startedAt, updatedAt: endedAt }) } : {}),
      }))
      .catch((error: unknown) => {
        this.services.log(`the outcome of the run on thread ${handle.threadId} could not be stored: ${String(error)}`);
      });
  }

  /**
   * A thread stored as running that this process does not run: running in another process (which holds the thread's
   * lock), or left by one that is gone (then marked interrupted). A lock the store fails to take answers neither: its
   * error is thrown.
   */
  private async unheld(threadId: string): Promise<RunView> {
    const release = await lockAtOnce(this.services.store, threadId);
    if (!release) return { threadId, status: 'running', progress: 'running in another server process' };
    await release();
    await this.services.store.updateThread(threadId, { status: 'interrupted' });
    return interrupted(threadId);
  }

  private async writeRecord(handle: Handle, record: RunRecord): Promise<void> {
    await this.services.patchThreadMeta(handle.threadId, (meta) => ({ ...meta, [RUNS_META]: withRecord(meta, handle.id!, record) }));
  }

  /** A run this process does not hold: its stored outcome, or interrupted when it was left running. */
  private async fromStore(threadId: string): Promise<RunView> {
    // Another subject's thread is not there for this caller (checked before anything is read or marked).
    const thread = await visibleThread(this.services.store, threadId);
    if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread_id "${threadId}" does not exist`);
    if (thread.status === 'running' && !this.services.activeRuns.has(threadId)) return this.unheld(threadId);
    if (thread.status === 'interrupted') return interrupted(threadId);
    const last = thread.meta?.[LAST_RUN_META] as (RunView & { endedAt: string }) | undefined;
    if (last) return { ...last, threadId };
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      `thread ${threadId} has no run that outlived its call: call the tool again with this thread_id to continue it`,
    );
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The thread a run id belongs to (ids are `<thread id>.<suffix>`). */
function threadOfId(id: string): string | undefined {
  const dot = id.lastIndexOf('.');
  return dot > 0 ? id.slice(0, dot) : undefined;
}

/** The thread's run records with this one set, expired and surplus ones dropped. */
function withRecord(meta: Record<string, unknown>, id: string, record: RunRecord): Record<string, RunRecord> {
  const now = Date.now();
  const kept = Object.entries((meta[RUNS_META] ?? {}) as Record<string, RunRecord>).filter(
    ([key, old]) => key !== id && (old.status === 'running' || now - Date.parse(old.updatedAt ?? old.startedAt ?? '') < RUN_RECORD_TTL_MS),
  );
  return Object.fromEntries([...kept.slice(-(RUN_RECORDS_KEPT - 1)), [id, record]]);
}

function interrupted(threadId: string): RunView {
  return {
    threadId,
    status: 'interrupted',
    error: {
      code: 'INTERRUPTED',
      message: 'the run was interrupted: the server stopped before it ended. Continue the thread to pick up where it stopped.',
    },
  };
}
