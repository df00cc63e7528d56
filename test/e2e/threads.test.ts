/**
 * Threads survive a restart: call, stop the server, start it again on the
 * same data folder, continue with the thread_id, and the model receives the
 * earlier turns. Also checks secrets are encrypted on disk.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';

const AGENTS = path.join(FIXTURES, 'agents', 'runtime');
const model = new FakeModelServer();
beforeAll(() => model.start());
afterAll(() => model.stop());

describe('threads on disk', () => {
  it('[MC-7] continues a thread by thread_id after the server restarts', async () => {
    const dataDir = tempDir();
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' };
    const first = await connectStdio('legacy', { agentsDir: AGENTS, env, dataDir });
    model.reply({ toolCalls: [{ id: 'x', name: 'add_numbers', arguments: { a: 20, b: 22 } }] }, { text: 'It is 42.' });
    const answer = await first.client.callTool({ name: 'calculator', arguments: { message: 'What is 20 + 22?' } });
    const threadId = (answer.structuredContent as { thread_id: string }).thread_id;
    await first.client.close();

    const second = await connectStdio('modern', { agentsDir: AGENTS, env, dataDir });
    model.reply({ text: 'You asked about 20 + 22.' });
    const again = await second.client.callTool({ name: 'calculator', arguments: { message: 'What did I ask?', thread_id: threadId } });
    await second.client.close();
    expect((again.structuredContent as { thread_id: string }).thread_id).toBe(threadId);
    expect(model.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You calculate.' },
      { role: 'user', content: 'What is 20 + 22?' },
      { role: 'assistant', content: 'It is 42.' },
      { role: 'user', content: 'What did I ask?' },
    ]);
  });

  it('[PR-16] keeps secret variables supplied with a call encrypted at rest', async () => {
    const dataDir = tempDir();
    const secret = 'sk-live-abcdef123456';
    const { client } = await connectStdio('legacy', {
      agentsDir: AGENTS,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      dataDir,
    });
    model.reply({ text: 'ok' });
    const result = await client.callTool({
      name: 'leaky',
      arguments: { message: 'hi' },
      _meta: { 'agentport/variables': { API_TOKEN: secret, STORE_ID: 's' } },
    });
    await client.close();
    expect(result.isError).toBeFalsy();
    const files = walk(dataDir);
    expect(files.some((f) => f.endsWith('variables.json'))).toBe(true);
    for (const file of files) expect(readFileSync(file, 'utf8')).not.toContain(secret);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}
