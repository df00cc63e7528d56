/**
 * The model behind test/fixtures/agents/tasks (the MCP conformance suite's
 * Tasks fixtures, as agentport prompts and agents), by rule: the suite calls
 * the fixtures as often as it likes.
 */
import { systemText, userText, type RecordedRequest, type ScriptedReply } from './fakeModelServer.js';

/** How the fixtures' model behaves, whatever the suite calls and how often. */
export function playFixtures(body: RecordedRequest['body']): ScriptedReply {
  if (body.model === 'broken-model') return { status: 400, error: 'this model refuses every request' };
  const system = systemText(body);
  const last = body.messages.at(-1);
  const asked = userText(body);
  if (system.startsWith('Greet.'))
    return { text: `Hello, ${/"name"\s*:\s*"([^"]*)"/.exec(asked)?.[1] ?? /name\W+(\w+)/.exec(asked)?.[1] ?? 'you'}!` };
  if (system.startsWith('Compute slowly.')) {
    if (last?.role === 'tool') return { text: 'Computed.' };
    const seconds = Number(/seconds\W{0,4}(\d+(?:\.\d+)?)/.exec(asked)?.[1] ?? 0);
    return { toolCalls: [{ name: 'sleep', arguments: { seconds } }] };
  }
  if (system.startsWith('Fail.')) {
    if (last?.role === 'tool') return { toolCalls: [{ name: 'give_up', arguments: { message: 'the job always fails' } }] };
    return { toolCalls: [{ name: 'sleep', arguments: { seconds: 1 } }] };
  }
  if (system.startsWith('Chat.')) {
    const turn = body.messages.filter((m) => m.role === 'user').length;
    if (last?.role === 'user' && String(last.content).includes('sleep'))
      return { toolCalls: [{ name: 'sleep', arguments: { seconds: 1 } }] };
    return { text: `turn ${turn}` };
  }
  if (system.startsWith('Delete on confirmation.')) {
    if (last?.role === 'tool') return { text: `Deleted: ${String(last.content)}` };
    return { toolCalls: [{ name: 'subagent_create', arguments: { name: 'deleter1', arguments: { message: 'delete the file' } } }] };
  }
  if (system.startsWith('Deleter.')) return { toolCalls: [{ name: 'done', arguments: { message: 'the file is gone' } }] };
  return { status: 500, error: `no rule for the system prompt ${JSON.stringify(system.slice(0, 40))}` };
}
