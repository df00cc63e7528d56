/**
 * The signals that end a command cleanly: SIGTERM (a service manager, `kill`),
 * SIGINT (Ctrl-C) and SIGHUP (the terminal the command runs in was closed, or
 * its SSH session ended). Node gives SIGHUP its default action even under
 * `nohup`, which would end the process with nothing recorded.
 *
 * A repeat of SIGTERM or SIGHUP while the command stops is ignored: the stop
 * under way has a deadline of its own, and a terminal closing can send SIGHUP
 * more than once. A second SIGINT is someone pressing Ctrl-C again to quit at
 * once, as shells and other servers let them.
 */

export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Exit code of a process that quit at a second Ctrl-C (128 + SIGINT's number), as shells report it. */
export const EXIT_INTERRUPTED = 130;

/**
 * Calls `stop` at the first of the stop signals; then a second SIGINT calls `quit` (by default: exit at once with
 * {@link EXIT_INTERRUPTED}) and the others are ignored. Returns a function that stops listening.
 */
export function onStopSignals(stop: (signal: StopSignal) => void, quit: () => void = () => process.exit(EXIT_INTERRUPTED)): () => void {
  let stopping = false;
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => {
      if (!stopping) {
        stopping = true;
        stop(signal);
      } else if (signal === 'SIGINT') {
        quit();
      }
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
}
