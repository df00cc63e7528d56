/**
 * The one logger: lines go to stderr, never stdout (on stdio, stdout carries
 * JSON-RPC). Callers that handle secrets redact before calling it.
 */
export type LogLine = (line: string) => void;

export const logToStderr: LogLine = (line) => {
  process.stderr.write(`[agentport] ${line}\n`);
};

export const log = {
  info: (message: string) => logToStderr(message),
  warn: (message: string) => logToStderr(`warning: ${message}`),
  error: (message: string) => logToStderr(`error: ${message}`),
};
