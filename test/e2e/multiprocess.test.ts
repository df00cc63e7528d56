/**
 * Two server processes on one data folder (Claude Desktop and Claude Code
 * launching the same agents folder): turns of one thread never interleave,
 * and `seq` numbers stay unique.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resultText, useModelServer } from '../support/modelForSuite.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';
import { FileStore } from '../../src/store/fileStore.js';

const NOISY = path.join(FIXTURES, 'agents', 'noisy');
const { model, env: modelEnv } = useModelServer();
const textOf = resultText;

describe('two processes, one data folder', () => {
  it('[RL-5] serialises turns of one thread across processes and keeps seq unique', async () => {
    const dataDir = tempDir();
    const env = modelEnv();
    const a = await connectStdio('legacy', { agentsDir: NOISY, env, dataDir });
    const b = await connectStdio('legacy', { agentsDir: NOISY, env, dataDir });
    try {
      model.reply({ text: 'first' });
      const first = await a.client.callTool({ name: 'noisy', arguments: { message: 'start' } });
      const threadId = (first.structuredContent as { thread_id: string }).thread_id;

      model.reply({ text: 'slow turn from A', delayMs: 1200 }, { text: 'turn from B' });
      const slow = a.client.callTool({ name: 'noisy', arguments: { message: 'from A', thread_id: threadId } });
      await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBe(2);
      const fromB = b.client.callTool({ name: 'noisy', arguments: { message: 'from B', thread_id: threadId } });
      expect(textOf(await slow)).toBe('slow turn from A');
      expect(textOf(await fromB)).toBe('turn from B');

      const messages = await new FileStore({ dir: dataDir }).listMessages(threadId);
      expect(messages.map((m) => `${m.seq}:${m.role}:${String(m.content)}`)).toEqual([
        '1:user:start',
        '2:assistant:first',
        '3:user:from A',
        '4:assistant:slow turn from A',
        '5:user:from B',
        '6:assistant:turn from B',
      ]);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  }, 20_000);
});
