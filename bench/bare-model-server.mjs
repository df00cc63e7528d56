// The reference for a call: a bare MCP SDK v2 server on stdio whose one tool
// makes the same `openai` call agentport's one-step run makes, and answers
// with the text. No thread, no store, no validation beyond the SDK's.
import OpenAI from 'openai';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL, maxRetries: 0 });

serveStdio(() => {
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
});
