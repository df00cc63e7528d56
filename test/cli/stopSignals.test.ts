/**
 * The signals that stop a command: the first of SIGTERM, SIGINT and SIGHUP
 * stops it; repeats are ignored except a second Ctrl-C, which quits at once.
 * (The commands' handling of real signals is in test/e2e/shutdown.test.ts and
 * test/cli/run.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { onStopSignals, type StopSignal } from '../../src/cli/stopSignals.js';

const SIGNALS: StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
let stopListening: (() => void) | undefined;
afterEach(() => stopListening?.());

/** Calls the listeners as a delivered signal would (no signal is sent to the test process). */
const deliver = (signal: StopSignal) => process.emit(signal, signal);

describe('onStopSignals', () => {
  it.each(SIGNALS)('[RL-4] %s stops once; SIGTERM and SIGHUP after it are ignored', (first) => {
    const stopped: StopSignal[] = [];
    let quits = 0;
    stopListening = onStopSignals(
      (signal) => stopped.push(signal),
      () => quits++,
    );
    deliver(first);
    deliver('SIGTERM');
    deliver('SIGHUP');
    deliver(first === 'SIGINT' ? 'SIGHUP' : first);
    expect(stopped).toEqual([first]);
    expect(quits).toBe(0);
  });

  it('[RL-4] a Ctrl-C while stopping quits at once, whatever began the stop', () => {
    const stopped: StopSignal[] = [];
    let quits = 0;
    stopListening = onStopSignals(
      (signal) => stopped.push(signal),
      () => quits++,
    );
    deliver('SIGHUP');
    deliver('SIGINT');
    expect(stopped).toEqual(['SIGHUP']);
    expect(quits).toBe(1);
  });

  it('listens no more once told so', () => {
    const before = SIGNALS.map((signal) => process.listenerCount(signal));
    const stop = onStopSignals(() => {});
    expect(SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before.map((count) => count + 1));
    stop();
    expect(SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before);
  });
});
