/**
 * A continued thread's earlier turns are read only when the run needs them:
 * the cost of a turn of a prompt without includeChat does not grow with the
 * thread (ST-3), and what needs the history still gets all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memoryStore.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, type InProcessAgentport } from '../support/inProcess.js';
import { RUNTIME_AGENTS } from './harness.js';

/** A memory store that counts full reads of a thread's messages. */
class CountingStore extends MemoryStore {
  reads = 0;
  override async listMessages(threadId: string) {
    this.reads += 1;
    return super.listMessages(threadId);
  }
}

describe("[ST-3] reading a thread's history only when a run needs it", () => {
  const model = new FakeModelServer();
  const store = new CountingStore();
  let agentport: InProcessAgentport;
  beforeAll(async () => {
    await model.start();
    agentport = await startInProcess({
      agentsDir: RUNTIME_AGENTS,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      runtime: { store },
    });
  });
  afterAll(async () => {
    await agentport.close();
    await model.stop();
  });

  it("continues a prompt without includeChat without reading the thread's messages", async () => {
    model.reply({ text: 'one' });
    const first = await agentport.runtime.runPrompt({ target: 'forgetful', args: { message: 'first' } });
    for (let turn = 2; turn <= 5; turn++) {
      model.reply({ text: `answer ${turn}` });
      await agentport.runtime.runPrompt({ target: 'forgetful', args: { message: `turn ${turn}`, thread_id: first.threadId } });
    }
    expect(store.reads).toBe(0);
    // Its model saw this turn only; the thread keeps everything.
    expect(model.requests.at(-1)!.body.messages.map((m) => m.content)).toEqual(['You forget.', 'turn 5']);
    expect(await store.listMessages(first.threadId)).toHaveLength(10);
  });

  it('reads the history once for a prompt with includeChat, and shows every earlier turn', async () => {
    model.reply({ text: 'one' });
    const first = await agentport.runtime.runPrompt({ target: 'calculator', args: { message: 'first' } });
    store.reads = 0;
    model.reply({ toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 2 } }] }, { text: 'three' });
    await agentport.runtime.runPrompt({ target: 'calculator', args: { message: 'second', thread_id: first.threadId } });
    expect(store.reads).toBe(1);
    const last = model.requests.at(-1)!.body.messages;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool']);
  });
});
