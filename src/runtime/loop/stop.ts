/**
 * The stop phase of a step: after its tool calls ran, does the side's turn
 * end, and does the session end with it? In order of precedence: sessionFail,
 * sessionStop, the side's stop tool, `execution.stop()` (or `terminate()`),
 * then `execution.forceTurn()`.
 */
import type { Run } from '../run/types.js';
import type { ControlSignal } from './toolCalls.js';

export interface TurnEnd {
  /** Why the turn ended. */
  reason: 'response' | 'stop_tool' | 'session_stop' | 'session_fail' | 'stopped' | 'forced';
  /** The turn's response: its last text, or the stop tool's response property. */
  response: string;
  reasoning?: string;
  /** For session_stop / session_fail: the bound message. */
  message?: string;
  /** For session_stop / session_fail: paths of the bound attachments argument. */
  attachments?: string[];
  /** The side that takes the next turn when forceTurn chose it. */
  next?: 'a' | 'b';
}

export function stopAfterTools(run: Run, signals: readonly ControlSignal[], lastText: string | null): TurnEnd | undefined {
  const response = lastText ?? '';
  for (const role of ['session_fail', 'session_stop'] as const) {
    const signal = signals.find((s) => s.binding.role === role);
    if (signal) {
      const value = signal.args[signal.binding.messageProperty];
      const message = typeof value === 'string' ? value : (signal.result.result ?? response);
      return { reason: role, response: message, message, ...attachmentsOf(signal) };
    }
  }
  const stopTool = signals.find((s) => s.binding.role === 'stop_tool');
  if (stopTool) {
    const value = stopTool.binding.messageProperty ? stopTool.args[stopTool.binding.messageProperty] : undefined;
    return { reason: 'stop_tool', response: typeof value === 'string' ? value : response };
  }
  return stopRequested(run, response);
}

/** A stop or a forced turn asked for by a tool or hook through ThreadState.execution. */
export function stopRequested(run: Run, response: string): TurnEnd | undefined {
  if (run.execution.stopped) return { reason: 'stopped', response };
  const forced = run.execution.forcedSide;
  if (forced) return { reason: 'forced', response, next: forced };
  return undefined;
}

function attachmentsOf(signal: ControlSignal): { attachments?: string[] } {
  const property = signal.binding.attachmentsProperty;
  const value = property ? signal.args[property] : undefined;
  if (value === undefined) return {};
  return { attachments: (Array.isArray(value) ? value : [value]).map(String) };
}
