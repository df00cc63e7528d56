/**
 * stdio transport: what Claude Desktop and Claude Code launch. Only JSON-RPC
 * reaches stdout; the process ends when the host closes stdin (or its end of
 * stdout: an answer that cannot be written ends it too). A message
 * over the size limit is refused with a JSON-RPC error, never ending the
 * connection.
 */
import type { Writable } from 'node:stream';
import type { ProtocolOutput } from './processGuards.js';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { AgentportServer } from './createServer.js';
import { log } from '../log.js';
import { MessageSizeGuard } from './messageSizeGuard.js';

const DEFAULT_MAX_MESSAGE_MB = 64;

export interface StdioOptions {
  /** Largest accepted message, in MiB. */
  maxMessageMb?: number;
  /** Where JSON-RPC goes (the real stdout's write, when process.stdout itself is redirected). */
  output?: ProtocolOutput;
  /** Called when the host closes stdin (default: exit). */
  onEnd?: () => void;
}

export function startStdio(server: AgentportServer, options: StdioOptions = {}): void {
  const limit = Math.round((options.maxMessageMb ?? DEFAULT_MAX_MESSAGE_MB) * 1024 * 1024);
  const output = options.output ?? process.stdout;
  const guard = new MessageSizeGuard(limit, ({ id, bytes }) => {
    const message = `message of ${(bytes / 1024 / 1024).toFixed(1)} MiB refused: the limit is ${options.maxMessageMb ?? DEFAULT_MAX_MESSAGE_MB} MiB (--max-message-mb)`;
    log.warn(message);
    if (id !== undefined) output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message } })}\n`);
  });
  guard.readFrom(process.stdin);
  // Lines reaching the transport are within the limit; its own buffer limit must not be the smaller one.
  // The transport takes a Writable but uses only what ProtocolOutput has (write; error and drain events).
  const transport = new StdioServerTransport(guard, output as unknown as Writable, { maxBufferSize: limit + 1024 * 1024 });
  const handle = serveStdio(server.connectionFactory, { transport, onerror: (error) => log.error(error.message) });
  if (process.stdin.isTTY) {
    log.info('waiting for an MCP client on stdin: hosts such as Claude Desktop launch this command themselves.');
    log.info('To try it by hand: npx @modelcontextprotocol/inspector --cli --config mcp.json --server agentport --method tools/list');
  }
  // The SDK closes its transport on EOF; the server then stops, so nothing
  // (a pending model call, a timer) keeps a server with no host alive. A
  // stdin that fails or closes without an end stops it the same way.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Stop first (running work is interrupted and recorded), then close the transport.
    if (options.onEnd) options.onEnd();
    void handle.close().finally(() => {
      if (!options.onEnd) process.exit(0);
    });
  };
  // A transport that closed on its own (writing failed: the host went away) stops reading; the server stops then
  // too, as at the end of stdin, which a stdin paused for want of a reader would never reach.
  guard.on('pause', () => {
    if (guard.listenerCount('data') === 0) stop();
  });
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.stdin.once('error', (error: Error) => {
    log.error(`stdin failed: ${error.message}`);
    stop();
  });
}
