/**
 * Guards for a long-running server process that runs user code (agents/
 * definitions, tools, hooks) in-process.
 */
import { log } from '../log.js';

/**
 * On stdio, stdout is the JSON-RPC channel: a stray `console.log` in a tool or
 * a library would corrupt it. Console output is sent to stderr instead.
 */
export function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/**
 * A tool or hook that leaves a rejected promise or throws in a timer must not
 * take the server down: the failure is logged and the server keeps serving.
 */
export function survivePromiseLeaks(): void {
  process.on('unhandledRejection', (reason) => {
    log.error(`unhandled rejection (kept serving): ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}`);
  });
  process.on('uncaughtException', (error) => {
    log.error(`uncaught exception (kept serving): ${error.stack ?? error.message}`);
  });
}
