/**
 * stdio transport: what Claude Desktop and Claude Code launch. Only JSON-RPC
 * reaches stdout; the process ends when the host closes stdin.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { AgentportServer } from './createServer.js';
import { log } from '../log.js';

export function startStdio(server: AgentportServer): void {
  const handle = serveStdio(server.factory, { onerror: (error) => log.error(error.message) });
  if (process.stdin.isTTY) {
    log.info('waiting for an MCP client on stdin: hosts such as Claude Desktop launch this command themselves.');
    log.info('To try it by hand: npx @modelcontextprotocol/inspector --cli --config mcp.json --server agentport --method tools/list');
  }
  // The SDK closes its transport on EOF; exit explicitly so nothing (a
  // pending model call, a timer) keeps a server with no host alive.
  process.stdin.once('end', () => {
    void handle.close().finally(() => process.exit(0));
  });
}
