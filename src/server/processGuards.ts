/**
 * Guards for a long-running server process that runs user code (agents/
 * definitions, tools, hooks) in-process.
 */
import childProcess from 'node:child_process';
import { EventEmitter } from 'node:events';
import { syncBuiltinESMExports } from 'node:module';
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
 * `process.stdout.write` in a tool or a library) goes to stderr, redacted,
 * and so does the stdout of a child process that would inherit it. Returns what the protocol itself writes to: stdout's own `write`, with
 * stdout's `drain` and `error` events.
 */
export function keepStdoutForProtocol(): ProtocolOutput {
  keepChildrenOffStdout();
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
 * On stdio, a child process started with its stdin and stdout inherited (`stdio: 'inherit'`, `fork()`'s
 * default) would share the JSON-RPC channel, past the guard above: it could read the host's requests, and
 * write into the answers. Its stdout becomes this process's stderr instead (unredacted: it is the child's
 * own output), and its stdin is ignored. Patched on the `node:child_process` module itself, so `require`
 * and `import` (once the module's named exports are synced) both see it. Only inherited streams are
 * changed; pipes, files and `'ignore'` are left as given.
 */
function keepChildrenOffStdout(): void {
  const patched = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['spawn', 'spawnSync', 'execSync', 'execFileSync', 'fork'] as const) {
    const original = patched[name]!;
    const forked = name === 'fork';
    patched[name] = function (this: unknown, ...args: unknown[]) {
      // The options are the last argument (after the command or module, and an arguments array if any)
      // when it is a plain object or left undefined.
      const last = args.at(-1);
      const inPlace = args.length > 1 && (last === undefined || last === null || (typeof last === 'object' && !Array.isArray(last)));
      const options = ((inPlace ? last : undefined) ?? {}) as { stdio?: unknown; silent?: boolean };
      const stdio = childStdio(options.stdio ?? (forked && !options.silent ? 'inherit' : undefined), forked);
      if (stdio !== options.stdio) {
        if (inPlace) args[args.length - 1] = { ...options, stdio };
        else args.push({ stdio });
      }
      return original.apply(this, args);
    };
  }
  syncBuiltinESMExports();
}

/** `stdio` with an inherited stdin ignored and an inherited stdout sent to fd 2; the same value when neither is inherited. */
function childStdio(stdio: unknown, forked: boolean): unknown {
  const list: unknown = stdio === 'inherit' ? ['inherit', 'inherit', 'inherit', ...(forked ? ['ipc'] : [])] : stdio;
  if (!Array.isArray(list)) return stdio;
  const given = list as unknown[];
  const input = given[0] === 'inherit' || given[0] === 0 || given[0] === process.stdin;
  const output = given[1] === 'inherit' || given[1] === 1 || given[1] === process.stdout;
  if (!input && !output) return stdio;
  const changed = [...given];
  if (input) changed[0] = 'ignore';
  if (output) changed[1] = 2;
  return changed;
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
