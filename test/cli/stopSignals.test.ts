/**
 * The signals that stop a command: the first of SIGTERM, SIGINT and SIGHUP
 * stops it; repeats are ignored except a second Ctrl-C, which quits at once,
 * unless it comes right after the first (the same press, passed on by npm).
 * (The commands' handling of real signals is in test/e2e/shutdown.test.ts and
 * test/cli/run.test.ts.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { onStopSignals, type StopSignal, type StopSignals } from '../../src/cli/stopSignals.js';

const SIGNALS: StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
let listening: StopSignals | undefined;
afterEach(() => {
  listening?.close();
  vi.useRealTimers();
});

/** Calls the listeners as a delivered signal would (no signal is sent to the test process). */
const deliver = (signal: StopSignal) => process.emit(signal, signal);

/** Listens, keeping what it was told. */
function listen() {
  const told = { stopped: [] as StopSignal[], quits: 0 };
  listening = onStopSignals(
    (signal) => told.stopped.push(signal),
    () => told.quits++,
  );
  return told;
}

describe('onStopSignals', () => {
  it.each(SIGNALS)('[RL-4] %s stops once; SIGTERM and SIGHUP after it are ignored', (first) => {
    const told = listen();
    deliver(first);
    deliver('SIGTERM');
    deliver('SIGHUP');
    deliver(first === 'SIGINT' ? 'SIGHUP' : first);
    expect(told).toEqual({ stopped: [first], quits: 0 });
  });

  it('[RL-4] a Ctrl-C while stopping quits at once, whatever began the stop', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const told = listen();
    deliver('SIGHUP');
    vi.advanceTimersByTime(600);
    deliver('SIGINT');
    expect(told).toEqual({ stopped: ['SIGHUP'], quits: 1 });
  });

  it('[RL-4] after a stop that began some other way (stdin closed), a Ctrl-C quits, unless it came with it', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const told = listen();
    listening!.stopping();
    // A host that ends on Ctrl-C closes the server's stdin as the same press reaches the server.
    deliver('SIGINT');
    expect(told).toEqual({ stopped: [], quits: 0 });
    vi.advanceTimersByTime(600);
    deliver('SIGINT');
    expect(told).toEqual({ stopped: [], quits: 1 });
  });

  it('[RL-4] a second Ctrl-C right after the first is the same press (npm passes it on); a later one quits', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const told = listen();
    deliver('SIGINT');
    vi.advanceTimersByTime(499);
    deliver('SIGINT');
    expect(told).toEqual({ stopped: ['SIGINT'], quits: 0 });
    vi.advanceTimersByTime(1);
    deliver('SIGINT');
    expect(told).toEqual({ stopped: ['SIGINT'], quits: 1 });
  });

  it('listens no more once closed', () => {
    const before = SIGNALS.map((signal) => process.listenerCount(signal));
    const signals = onStopSignals(() => {});
    expect(SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before.map((count) => count + 1));
    signals.close();
    expect(SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before);
  });
});
