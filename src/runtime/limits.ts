/** The runtime's default limits (a module of their own so the CLI can show them without loading the runtime). */
export const DEFAULT_MAX_STEPS = 25;
export const DEFAULT_MAX_DEPTH = 8;
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** Turns a dual_ai session takes when its agent sets no maxSessionTurns. */
export const DEFAULT_MAX_SESSION_TURNS = 20;
/** How long a function tool may run unless it says otherwise (--tool-timeout). */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
