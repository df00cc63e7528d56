/**
 * Server logging goes to stderr only: on stdio, stdout carries JSON-RPC.
 */
const write = (level: string, message: string) => {
  process.stderr.write(`[agentport] ${level}${message}\n`);
};

export const log = {
  info: (message: string) => write('', message),
  warn: (message: string) => write('warning: ', message),
  error: (message: string) => write('error: ', message),
};
