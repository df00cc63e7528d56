/**
 * The live execution state of a session: step counts per side, whose turn
 * it is, and the requests a tool or hook can make (stop the session, hand the
 * turn to a side). Tools and hooks read it through `state.execution`.
 */
import type { ExecutionState } from '../../definitions/types.js';

export class Execution implements ExecutionState {
  stepCount = 0;
  sideAStepCount = 0;
  sideBStepCount = 0;
  currentSide: 'a' | 'b' = 'a';
  stopped = false;
  stoppedBy: 'a' | 'b' | undefined;
  /** Set by forceTurn: the side that takes the next turn once this step is done. */
  forcedSide: 'a' | 'b' | undefined;
  terminated = false;

  constructor(readonly abortSignal: AbortSignal) {}

  beginTurn(side: 'a' | 'b'): void {
    this.currentSide = side;
    this.forcedSide = undefined;
  }

  countStep(): void {
    this.stepCount += 1;
    if (this.currentSide === 'a') this.sideAStepCount += 1;
    else this.sideBStepCount += 1;
  }

  // Arrow properties: tools may destructure them off state.execution.
  stop = (): void => {
    if (this.stopped) return;
    this.stopped = true;
    this.stoppedBy = this.currentSide;
  };

  forceTurn = (side: 'a' | 'b'): void => {
    if (side !== 'a' && side !== 'b') throw new TypeError(`forceTurn: side must be 'a' or 'b', not ${String(side)}`);
    this.forcedSide = side;
  };
}
