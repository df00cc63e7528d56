// The reference for big-folder start-up: a bare MCP SDK v2 server on stdio
// registering the tools of a generated module (bench/bigFolderFixture.mjs):
// bare-tools.mjs (input schemas only) or bare-tools-listed.mjs (listed as
// agentport lists them).
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const { register } = await import(pathToFileURL(process.argv[2]).href);
serveStdio(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  register(server, z);
  return server;
});
