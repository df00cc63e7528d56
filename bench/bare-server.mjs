// The reference for start-up time: a bare MCP SDK v2 server with one tool, on stdio.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

serveStdio(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the message.', inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => ({
      content: [{ type: 'text', text: message }],
    }),
  );
  return server;
});
