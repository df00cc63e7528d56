/**
 * The scripted model server for one test file: started before its tests,
 * stopped after, and the environment that points agentport at it.
 */
import { afterAll, beforeAll } from 'vitest';
import { FakeModelServer } from './fakeModelServer.js';

export function useModelServer(): { model: FakeModelServer; env: () => Record<string, string> } {
  const model = new FakeModelServer();
  beforeAll(async () => {
    await model.start();
  });
  afterAll(async () => {
    await model.stop();
  });
  return { model, env: () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' }) };
}

/** The text of a tools/call result. */
export function resultText(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
}
