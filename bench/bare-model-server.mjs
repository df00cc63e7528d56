// The reference for a call: a bare MCP SDK v2 server whose one tool makes the
// same `openai` call agentport's one-step run makes, and answers with the
// text. No thread, no store, no validation beyond the SDK's.
//
// On stdio by default. With `--http` it serves Streamable HTTP the way a
// minimal node:http app does with the SDK (createMcpHandler + toNodeHandler
// from @modelcontextprotocol/node, the Host/Origin guards, and a bearer token
// check when BENCH_TOKEN is set), on 127.0.0.1 at `--port` (default: a free
// one), and prints `bare server at <url>` on stderr once it listens.
import { createServer } from 'node:http';
import OpenAI from 'openai';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL, maxRetries: 0 });

function factory() {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('plain', { description: 'One model call.', inputSchema: z.object({ message: z.string() }) }, async ({ message }) => {
    const completion = await client.chat.completions.create({
      model: 'bench-model',
      messages: [
        { role: 'system', content: 'Answer.' },
        { role: 'user', content: message },
      ],
    });
    return { content: [{ type: 'text', text: completion.choices[0]?.message.content ?? '' }] };
  });
  return server;
}

const args = process.argv.slice(2);
if (args.includes('--http')) {
  const portAt = args.indexOf('--port');
  const port = portAt >= 0 ? Number(args[portAt + 1]) : 0;
  // Loaded only here: the stdio variant stays as it was.
  const { localhostHostValidation, localhostOriginValidation, toNodeHandler } = await import('@modelcontextprotocol/node');
  const token = process.env.BENCH_TOKEN;
  const validateHost = localhostHostValidation();
  const validateOrigin = localhostOriginValidation();
  const mcp = toNodeHandler(createMcpHandler(factory));
  const server = createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end('{"error":"invalid token"}');
      return;
    }
    void mcp(req, res);
  });
  server.listen(port, '127.0.0.1', () => {
    const address = server.address();
    console.error(`bare server at http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/mcp`);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  serveStdio(factory);
}
