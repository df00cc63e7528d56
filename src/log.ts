/**
 * The one logger: lines go to stderr, never stdout (on stdio, stdout carries
 * JSON-RPC). Callers that handle secrets redact before calling it.
 */
export type LogLine = (line: string) => void;

/**
 * Secret values seen by any run in this process. Log lines are written long
 * after the run that knew a secret (an unhandled rejection, say), so the
 * logger keeps its own list.
 */
const secrets = new Set<string>();
const REDACTED = '[redacted secret]';

export function hideInLogs(value: string): void {
  for (const form of secretForms(value)) secrets.add(form);
}

/** A secret as it may appear in output: as it is, JSON-escaped, and URL-encoded. */
export function secretForms(value: string): string[] {
  return [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])];
}

/** A line with every secret seen in this process replaced. */
export function redact(line: string): string {
  let out = line;
  // Longest first: a secret inside a longer one must not leave the rest of it visible.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * Whether stderr has failed: its reader went away (a closed terminal, a host that closed the pipe). Nothing more is
 * written to it then. Without a listener, the failure would be an uncaught exception, which the process guard logs,
 * to the same stderr: a loop of failing writes until the process is killed.
 */
let stderrGone = false;
process.stderr.on('error', () => {
  stderrGone = true;
});

export const logToStderr: LogLine = (line) => {
  if (!stderrGone) process.stderr.write(`[agentport] ${redact(line)}\n`);
};

export const log = {
  info: (message: string) => logToStderr(message),
  warn: (message: string) => logToStderr(`warning: ${message}`),
  error: (message: string) => logToStderr(`error: ${message}`),
};
