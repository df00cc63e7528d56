/**
 * Run handles: a call that outlives the caller's patience (the server's call
 * budget) goes on in the background and is reached by thread id through
 * run_wait, run_status and run_cancel. While it runs, this process keeps its
 * promise and latest progress; its outcome is then stored with the thread
 * (meta `lastRun`) so run_wait answers from the store after a restart. A
 * thread left `running` by a process that is gone is reported interrupted.
 */
import { AgentportError, errorInfo, type ErrorInfo } from '../../errors.js';
import type { RunResult } from '../types.js';
import type { Services } from './types.js';

/** Where a run stands, as run_wait / run_status / run_cancel report it. */
export interface RunView {
  threadId: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
  /** The latest progress message, while running. */
  progress?: string;
  startedAt?: string;
  /** The outcome, once it ended. */
  result?: RunResult;
  error?: ErrorInfo;
}

interface Handle {
  threadId: string;
  startedAt: string;
  progress: string | undefined;
  done: Promise<RunResult>;
  settled: RunView | undefined;
  cancel: () => void;
}

const LAST_RUN_META = 'lastRun';
/** How long a finished run stays in memory before run_wait answers from the store. */
const SETTLED_KEPT_MS = 10 * 60_000;
/** The longest a single run_wait waits. */
export const MAX_WAIT_MS = 50_000;

export class RunHandles {
  private readonly handles = new Map<string, Handle>();

  constructor(private readonly services: Services) {}

  /**
   * Keeps a run that a caller stopped waiting for. Returns the sink for its
   * progress from now on.
   */
  async detach(threadId: string, done: Promise<RunResult>, cancel: () => void): Promise<(message: string) => void> {
    const handle: Handle = { threadId, startedAt: new Date().toISOString(), progress: undefined, done, settled: undefined, cancel };
    this.handles.set(threadId, handle);
    // Marked running now: a process that dies leaves a trace the next one reads.
    this.services.activeRuns.get(threadId)?.markRunning?.();
    // A run that goes on without its caller holds the thread's lock across processes until it ends
    // (a first turn takes none while its caller waits); best effort: a turn queued here already holds it.
    const release = await this.services.store.lockThread?.(threadId, 0).catch(() => undefined);
    if (release) void done.finally(() => release()).catch(() => {});
    void done.then(
      (result) => this.settle(handle, { threadId, status: result.error ? 'failed' : 'completed', result }),
      (error: unknown) => this.settle(handle, { threadId, status: errorInfo(error).code === 'CANCELLED' ? 'cancelled' : 'failed', error: errorInfo(error) }),
    );
    return (message) => {
      handle.progress = message;
    };
  }

  /** Waits up to `timeoutMs` (at most 50 s) for the run's end. */
  async wait(threadId: string, timeoutMs: number): Promise<RunView> {
    const handle = this.handles.get(threadId);
    if (!handle) return this.fromStore(threadId);
    if (!handle.settled) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([handle.done.catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(timeoutMs, MAX_WAIT_MS)))))]);
      clearTimeout(timer);
      // Let the settle callback run.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return this.view(handle);
  }

  async status(threadId: string): Promise<RunView> {
    const handle = this.handles.get(threadId);
    return handle ? this.view(handle) : this.fromStore(threadId);
  }

  async cancel(threadId: string): Promise<RunView> {
    const handle = this.handles.get(threadId);
    if (!handle) return this.fromStore(threadId);
    if (!handle.settled) {
      handle.cancel();
      return this.wait(threadId, 5_000);
    }
    return this.view(handle);
  }

  private view(handle: Handle): RunView {
    return handle.settled ?? { threadId: handle.threadId, status: 'running', startedAt: handle.startedAt, ...(handle.progress ? { progress: handle.progress } : {}) };
  }

  private async settle(handle: Handle, view: RunView): Promise<void> {
    handle.settled = view;
    // Kept a while for run_wait; after that the stored outcome answers.
    setTimeout(() => {
      if (this.handles.get(handle.threadId) === handle) this.handles.delete(handle.threadId);
    }, SETTLED_KEPT_MS).unref();
    const lastRun = { status: view.status, endedAt: new Date().toISOString(), ...(view.result ? { result: view.result } : {}), ...(view.error ? { error: view.error } : {}) };
    await this.services.patchThreadMeta(handle.threadId, (meta) => ({ ...meta, [LAST_RUN_META]: lastRun })).catch((error: unknown) => {
      this.services.log(`the outcome of the run on thread ${handle.threadId} could not be stored: ${String(error)}`);
    });
  }

  /** A run this process does not hold: its stored outcome, or interrupted when it was left running. */
  private async fromStore(threadId: string): Promise<RunView> {
    const thread = await this.services.store.getThread(threadId).catch(() => undefined);
    if (!thread) throw new AgentportError('THREAD_NOT_FOUND', `thread_id "${threadId}" does not exist`);
    if (thread.status === 'running' && !this.services.activeRuns.has(threadId)) {
      // Running in another process (it holds the thread's lock), or left by one that is gone.
      const release = await this.services.store.lockThread?.(threadId, 0).catch(() => undefined);
      if (this.services.store.lockThread && !release) return { threadId, status: 'running', progress: 'running in another server process' };
      await release?.();
      await this.services.store.updateThread(threadId, { status: 'interrupted' });
      return interrupted(threadId);
    }
    if (thread.status === 'interrupted') return interrupted(threadId);
    const last = thread.meta?.[LAST_RUN_META] as (RunView & { endedAt: string }) | undefined;
    if (last) return { ...last, threadId };
    throw new AgentportError('INVALID_ARGUMENTS', `thread ${threadId} has no run that outlived its call: call the tool again with this thread_id to continue it`);
  }
}

function interrupted(threadId: string): RunView {
  return {
    threadId,
    status: 'interrupted',
    error: { code: 'INTERRUPTED', message: 'the run was interrupted: the server stopped before it ended. Continue the thread to pick up where it stopped.' },
  };
}
