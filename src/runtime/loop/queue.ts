/**
 * Work queued through ThreadState (queueMessage, queueTool) is delivered at
 * the start of the next step of the side that queued it: messages are
 * stored, tool calls are stored as if the model had made them and run, so the
 * model sees both. A queued call of a session or stop tool ends the turn like
 * one the model made.
 */
import { randomUUID } from 'node:crypto';
import type { Run, Side } from '../run/types.js';
import { threadState } from '../state/threadState.js';
import { storeMessage } from './storeMessage.js';
import { executeToolCalls, type ControlSignal } from './toolCalls.js';

export async function deliverQueued(run: Run, side: Side): Promise<ControlSignal[]> {
  const signals: ControlSignal[] = [];
  for (let index = run.queue.findIndex((q) => q.side === side.key); index >= 0; index = run.queue.findIndex((q) => q.side === side.key)) {
    const [item] = run.queue.splice(index, 1);
    if (!item) break;
    const state = threadState(run, side);
    if (item.kind === 'message') {
      await storeMessage(run, side, state, item.message);
      continue;
    }
    const call = { id: `queued_${randomUUID()}`, name: item.name, arguments: JSON.stringify(item.args) };
    await storeMessage(run, side, state, { role: 'assistant', content: null, toolCalls: [call], meta: { queued: true } });
    signals.push(...(await executeToolCalls(run, side, [call])));
  }
  return signals;
}
