/**
 * Progress notifications and cancellation through the MCP client.
 */
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { newClient } from '../support/mcpClients.js';
import { textOf } from '../support/inProcess.js';
import { useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness({}, { heartbeatMs: 20 });

describe('progress', () => {
  it('[MC-6] sends a progress message at each step and heartbeats while the model is slow', async () => {
    h.model.reply({ toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 2 } }], delayMs: 400 }, { text: '3' });
    const messages: string[] = [];
    const result = await h.client.callTool(
      { name: 'calculator', arguments: { message: '1+2' } },
      { onprogress: (p) => messages.push(p.message ?? '') },
    );
    expect(textOf(result)).toBe('3');
    expect(messages).toContain('calculator: step 1, calling the model');
    expect(messages).toContain('calculator: running add_numbers');
    expect(messages).toContain('calculator: step 2, calling the model');
    expect(messages.filter((m) => m.startsWith('calculator: step 1, still waiting for the model')).length).toBeGreaterThanOrEqual(2);
  });
});

describe('cancellation', () => {
  it('[MC-6] aborts the model call and the loop, and records it in the thread', async () => {
    h.model.reply({ text: 'too late', delayMs: 600 });
    const controller = new AbortController();
    const threadsBefore = new Set((await h.agentport.runtime.store.listThreads()).map((t) => t.id));
    const pending = h.client.callTool({ name: 'forgetful', arguments: { message: 'slow' } }, { signal: controller.signal });
    await waitFor(() => h.model.requests.length > 0 && h.sent().length === 1);
    controller.abort('user stopped it');
    await expect(pending).rejects.toThrow();
    await waitFor(async () => {
      const thread = (await h.agentport.runtime.store.listThreads()).find((t) => !threadsBefore.has(t.id));
      return thread?.status === 'cancelled';
    });
    const thread = (await h.agentport.runtime.store.listThreads()).find((t) => !threadsBefore.has(t.id))!;
    expect(thread.meta?.cancelledAt).toBeTypeOf('string');
    // Past the time the late answer was sent: it was never stored, and the loop went no further.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await h.agentport.runtime.store.listMessages(thread.id)).map((m) => m.role)).toEqual(['user']);
    expect(h.sent()).toHaveLength(1);
  });
});

describe('cancellation over stateless HTTP (2025-11-25 clients)', () => {
  it('[RL-6] routes notifications/cancelled to the call it names, and the run stops', async () => {
    const legacy = await h.agentport.connect('legacy');
    h.model.reply({ text: 'too late', delayMs: 1500 });
    const controller = new AbortController();
    const threadsBefore = new Set((await h.agentport.runtime.store.listThreads()).map((t) => t.id));
    const pending = legacy.callTool({ name: 'forgetful', arguments: { message: 'slow' } }, { signal: controller.signal });
    await waitFor(() => h.sent().length === 1);
    controller.abort('user stopped it');
    await expect(pending).rejects.toThrow();
    // Well before the model would have answered, the run is recorded as cancelled.
    await waitFor(
      async () => (await h.agentport.runtime.store.listThreads()).find((t) => !threadsBefore.has(t.id))?.status === 'cancelled',
      1000,
    );
  });
});

describe('cancellation over a connection (stdio-like) beside stateless HTTP', () => {
  it('[RL-6] a cancellation from a connection does not reach an HTTP call with the same request id', async () => {
    // Both clients are fresh: initialize is request 0 for each, and the tool call request 1.
    const overHttp = await h.agentport.connect('legacy');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await (await h.agentport.server.connectionFactory({ era: 'legacy' })).connect(serverSide);
    const overConnection = newClient('legacy');
    await overConnection.connect(clientSide);
    try {
      h.model.reply({ text: 'answered', delayMs: 800 }, { text: 'answered', delayMs: 800 });
      const httpCall = overHttp.callTool({ name: 'forgetful', arguments: { message: 'over http' } });
      await waitFor(() => h.sent().length === 1);
      const controller = new AbortController();
      const connectionCall = overConnection.callTool(
        { name: 'forgetful', arguments: { message: 'over the connection' } },
        { signal: controller.signal },
      );
      await waitFor(() => h.sent().length === 2);
      controller.abort('the user stopped it');
      await expect(connectionCall).rejects.toThrow();
      // The HTTP call with the same id runs to its end.
      const result = await httpCall;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe('answered');
    } finally {
      await overConnection.close();
    }
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
