// The reference for big-folder start-up: a bare MCP SDK v2 server on stdio
// registering the tools of a generated module (bench/bigFolderFixture.mjs).
// `--same-list`: with agentport's title, output schema, annotations and thread_id
// argument, so both servers send a tools/list of the same size.
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const { register } = await import(pathToFileURL(process.argv[2]).href);
const sameList = process.argv.includes('--same-list');
serveStdio(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  register(server, z, sameList);
  return server;
});
