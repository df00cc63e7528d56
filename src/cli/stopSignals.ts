/**
 * The signals that end a command cleanly: SIGTERM (a service manager, `kill`),
 * SIGINT (Ctrl-C) and SIGHUP (the terminal the command runs in was closed, or
 * its SSH session ended). Node gives SIGHUP its default action even under
 * `nohup`, which would end the process with nothing recorded.
 *
 * A repeat of SIGTERM or SIGHUP while the command stops is ignored: the stop
 * under way has a deadline of its own, and a terminal closing can send SIGHUP
 * more than once. A second Ctrl-C is someone pressing it again to quit at
 * once, as shells and other servers let them; unless it comes within
 * {@link SAME_PRESS_MS} of the first, which is the same press twice: npm and
 * npx pass the SIGINT they get from the terminal on to the command, which got
 * it from the terminal too.
 */

export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Exit code of a process that quit at a second Ctrl-C (128 + SIGINT's number), as shells report it. */
export const EXIT_INTERRUPTED = 130;

/** A Ctrl-C this soon after the one that began the stop is that one again, passed on by a parent (see above). */
const SAME_PRESS_MS = 500;

export interface StopSignals {
  /** A stop began some other way (stdin closed, say): a Ctrl-C from now on quits at once. */
  stopping(): void;
  /** Stops listening. */
  close(): void;
}

/**
 * Calls `stop` at the first of the stop signals; then a second Ctrl-C calls `quit` (by default: exit at once with
 * {@link EXIT_INTERRUPTED}) and the others are ignored.
 */
export function onStopSignals(stop: (signal: StopSignal) => void, quit: () => void = () => process.exit(EXIT_INTERRUPTED)): StopSignals {
  let stopping = false;
  /** When the Ctrl-C that began the stop came (performance.now()), if one did. */
  let interruptedAt: number | undefined;
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => {
      if (!stopping) {
        stopping = true;
        if (signal === 'SIGINT') interruptedAt = performance.now();
        stop(signal);
      } else if (signal === 'SIGINT' && (interruptedAt === undefined || performance.now() - interruptedAt >= SAME_PRESS_MS)) {
        quit();
      }
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return {
    stopping: () => {
      stopping = true;
    },
    close: () => {
      for (const [signal, listener] of listeners) process.off(signal, listener);
    },
  };
}
