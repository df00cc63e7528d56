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
 * {@link SAME_PRESS_MS} of the stop's beginning, when it is the press that
 * began it (npm and npx pass the SIGINT they get from the terminal on to the
 * command, which got it from the terminal too) or came with what did (a host
 * ending on Ctrl-C closes the server's stdin).
 */

export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Exit code of a process that quit at a second Ctrl-C (128 + SIGINT's number), as shells report it. */
export const EXIT_INTERRUPTED = 130;

/** A Ctrl-C this soon after the stop began is the press that began it, or came with what did (see above). */
const SAME_PRESS_MS = 500;

export interface StopSignals {
  /** A stop began some other way (stdin closed, say): a Ctrl-C from now on (after the same-press window) quits at once. */
  stopping(): void;
  /** Stops listening. */
  close(): void;
}

/**
 * Calls `stop` at the first of the stop signals; then a second Ctrl-C calls `quit` (by default: exit at once with
 * {@link EXIT_INTERRUPTED}) and the others are ignored.
 */
export function onStopSignals(stop: (signal: StopSignal) => void, quit: () => void = () => process.exit(EXIT_INTERRUPTED)): StopSignals {
  /** When the stop began (performance.now()), however it began; undefined before. */
  let stoppedAt: number | undefined;
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => {
      if (stoppedAt === undefined) {
        stoppedAt = performance.now();
        stop(signal);
      } else if (signal === 'SIGINT' && performance.now() - stoppedAt >= SAME_PRESS_MS) {
        quit();
      }
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return {
    stopping: () => {
      stoppedAt ??= performance.now();
    },
    close: () => {
      for (const [signal, listener] of listeners) process.off(signal, listener);
    },
  };
}
