/**
 * Shared set-up for runtime tests: the runtime fixture agents served in
 * process over HTTP, the scripted model server, and helpers to read what the
 * model was sent during the current test.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer, type RecordedRequest } from '../support/fakeModelServer.js';
import { startInProcess, type InProcessAgentport } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';

export const RUNTIME_AGENTS = path.join(FIXTURES, 'agents', 'runtime');

export interface Harness {
  model: FakeModelServer;
  agentport: InProcessAgentport;
  client: Client;
  /** Requests the model received during the current test. */
  sent(): RecordedRequest['body'][];
  call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): ReturnType<Client['callTool']>;
}

export function useRuntimeHarness(
  env: Record<string, string> = {},
  runtime: Parameters<typeof startInProcess>[0]['runtime'] = {},
  agentsDir: string = RUNTIME_AGENTS,
): Harness {
  const model = new FakeModelServer();
  let mark = 0;
  const harness = {
    model,
    sent: () => model.requests.slice(mark).map((r) => r.body),
    call: (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
      harness.client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }),
  } as Harness;
  beforeAll(async () => {
    await model.start();
    harness.agentport = await startInProcess({
      agentsDir,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k', ...env },
      runtime,
    });
    harness.client = await harness.agentport.connect();
  });
  afterAll(async () => {
    await harness.agentport?.close();
    await model.stop();
  });
  beforeEach(() => {
    mark = model.requests.length;
  });
  afterEach(() => {
    expect(model.unexpected).toEqual([]);
    expect(model.remaining).toBe(0);
  });
  return harness;
}

export function threadIdOf(result: { structuredContent?: unknown }): string {
  return (result.structuredContent as { thread_id: string }).thread_id;
}
