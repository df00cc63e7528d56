/** The runtime's default limits (a module of their own so the CLI can show them without loading the runtime). */
export const DEFAULT_MAX_STEPS = 25;
export const DEFAULT_MAX_DEPTH = 8;
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** Turns a dual_ai session takes when its agent sets no maxSessionTurns. */
export const DEFAULT_MAX_SESSION_TURNS = 20;
/** How long a function tool may run unless it says otherwise (--tool-timeout). */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;

/** How long a run's record is kept with its thread after it ended (the TTL announced for tasks). */
export const RUN_RECORD_TTL_MS = 24 * 60 * 60_000;

/** setTimeout fires at once for delays above 2^31-1 ms: longer limits wait that long instead. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), 2_147_483_647);
}
