/**
 * Guards for a long-running server process that runs user code (agents/
 * definitions, tools, hooks) in-process.
 */
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import { format } from 'node:util';
import { log, redact } from '../log.js';

/**
 * Console output of user code goes to stderr, through the secret redactor,
 * on either transport: a tool that logs a secret it read does not leak it.
 * What definition files print while they load is held back until the
 * secrets they declare (with values in the environment) are known.
 */
export function redactConsole(): { release: () => void } {
  // Held back until release(): while definition files load, the secrets they might print are not known yet.
  let held: string[] | undefined = [];
  const toStderr = (...args: unknown[]) => {
    const line = format(...args);
    if (held) held.push(line);
    else process.stderr.write(`${redact(line)}\n`);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
  console.error = toStderr;
  console.trace = (...args: unknown[]) =>
    toStderr(`Trace: ${format(...args)}\n${new Error().stack?.split('\n').slice(2).join('\n') ?? ''}`);
  console.dir = (value: unknown) => toStderr(value);
  console.table = (value: unknown) => toStderr(value);
  return {
    release: () => {
      const lines = held ?? [];
      held = undefined;
      for (const line of lines) process.stderr.write(`${redact(line)}\n`);
    },
  };
}

/**
 * On stdio, stdout is the JSON-RPC channel: whatever else writes to it (a
 * `process.stdout.write` in a tool or a library) goes to stderr, redacted.
 * Returns what the protocol itself writes to: stdout's own `write`, with
 * stdout's `drain` and `error` events.
 */
export function keepStdoutForProtocol(): ProtocolOutput {
  const stdout = process.stdout;
  const protocol = protocolOutput(stdout, stdout.write.bind(stdout));
  stdout.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
    return process.stderr.write(redact(text), callback);
  };
  return protocol;
}

/**
 * What the protocol writes to on stdio: stdout's own `write`, and its `drain`
 * and `error` events. The stdio transport and the CLI use nothing else.
 */
export type ProtocolOutput = Pick<Writable, 'write'> & Pick<EventEmitter, 'on' | 'once' | 'off' | 'listeners'>;

/**
 * The protocol's side of stdout. Not a stream of its own: one in front of
 * stdout would take every message through the stream machinery twice, a
 * measurable part of a call over stdio.
 */
function protocolOutput(stdout: NodeJS.WriteStream, write: NodeJS.WriteStream['write']): ProtocolOutput {
  const events = new EventEmitter();
  // An error nobody listens for must not throw here: the transport reports its own.
  events.on('error', () => {});
  stdout.on('drain', () => events.emit('drain'));
  stdout.on('error', (error: Error) => events.emit('error', error));
  return Object.assign(events, { write });
}

/**
 * A tool or hook that leaves a rejected promise or throws in a timer must not
 * take the server down: the failure is logged and the server keeps serving.
 */
export function survivePromiseLeaks(): void {
  process.on('unhandledRejection', (reason) => {
    log.error(`unhandled rejection (kept serving): ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  });
  process.on('uncaughtException', (error) => {
    log.error(`uncaught exception (kept serving): ${error.stack ?? error.message}`);
  });
}
