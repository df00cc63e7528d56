/**
 * Per-user limits of `serve --http`: calls per minute (`--rate-limit`) and
 * runs at once (`--max-runs-per-user`, runs going on in the background after
 * their call returned a handle included). A user is the token's subject with
 * `--auth oauth`; otherwise every caller is the same user. A call over a
 * limit is refused before anything runs or is stored, with `RATE_LIMITED`
 * (an `isError` result saying which limit and when to try again); a refused
 * call does not count.
 *
 * Limits count calls of exposed prompts and agents (`runPrompt`): listing,
 * tool search and run_wait / run_status / run_cancel are not limited. They
 * are kept per process: behind a balancer each instance counts its own.
 */
import { AgentportError } from '../../errors.js';
import { currentCaller } from '../../runtime/run/owner.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { RunResult } from '../../runtime/types.js';

export interface UserLimits {
  /** Calls a user may make in any 60 s. */
  callsPerMinute?: number;
  /** Runs a user may have going at once. */
  maxRunsPerUser?: number;
}

const WINDOW_MS = 60_000;
/** Users who stopped calling are looked for at most this often: every user is visited then. */
const SWEEP_EVERY_MS = 1000;

/** The runtime with its `runPrompt` limited per user (everything else is the runtime's own). */
export function withUserLimits(runtime: Runtime, limits: UserLimits, now: () => number = Date.now): Runtime {
  const { callsPerMinute, maxRunsPerUser } = limits;
  if (!callsPerMinute && !maxRunsPerUser) return runtime;
  const recent = new Map<string, number[]>();
  const running = new Map<string, number>();
  let swept = Number.NEGATIVE_INFINITY;

  const admit = (user: string): void => {
    const at = now();
    const calls = (recent.get(user) ?? []).filter((time) => at - time < WINDOW_MS);
    if (callsPerMinute && calls.length >= callsPerMinute) {
      const retryAfterSeconds = Math.max(1, Math.ceil((calls[0]! + WINDOW_MS - at) / 1000));
      recent.set(user, calls);
      throw new AgentportError(
        'RATE_LIMITED',
        `rate limit reached: at most ${callsPerMinute} call${callsPerMinute === 1 ? '' : 's'} per minute per user (--rate-limit). Try again in ${retryAfterSeconds} s.`,
        { limit: 'calls_per_minute', max: callsPerMinute, retryAfterSeconds },
      );
    }
    const active = running.get(user) ?? 0;
    if (maxRunsPerUser && active >= maxRunsPerUser) {
      recent.set(user, calls);
      throw new AgentportError(
        'RATE_LIMITED',
        `too many runs at once: at most ${maxRunsPerUser} per user (--max-runs-per-user), and ${active} ${active === 1 ? 'is' : 'are'} still going (those in the background too: wait for them with run_wait, or stop one with run_cancel). Try again when one has ended.`,
        { limit: 'concurrent_runs', max: maxRunsPerUser },
      );
    }
    if (callsPerMinute) recent.set(user, [...calls, at]);
    running.set(user, active + 1);
  };
  const release = (user: string): void => {
    const left = (running.get(user) ?? 1) - 1;
    if (left > 0) running.set(user, left);
    else running.delete(user);
    // Users who stopped calling are forgotten once their window has passed.
    const at = now();
    if (at - swept < SWEEP_EVERY_MS) return;
    swept = at;
    for (const [key, calls] of recent) if (calls.every((time) => at - time >= WINDOW_MS)) recent.delete(key);
  };

  return {
    ...runtime,
    // Read through: the registry changes when the folder is reloaded (serve --watch).
    get registry() {
      return runtime.registry;
    },
    runPrompt(request): Promise<RunResult> {
      const user = request.owner ?? currentCaller() ?? '';
      try {
        admit(user);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      const call = runtime.runPrompt(request);
      void call.then(
        () => release(user),
        () => release(user),
      );
      return call;
    },
  };
}
