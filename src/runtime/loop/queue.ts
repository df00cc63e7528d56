/**
 * Work queued through ThreadState (queueMessage, queueTool) is delivered at
 * the start of the next step: messages are stored, tool calls are stored as
 * if the model had made them and run, so the model sees both.
 */
import { randomUUID } from 'node:crypto';
import type { Run, Side } from '../run/types.js';
import { threadState } from '../state/threadState.js';
import { storeMessage } from './storeMessage.js';
import { executeToolCalls } from './toolCalls.js';

export async function deliverQueued(run: Run, side: Side): Promise<void> {
  while (run.queue.length > 0) {
    const item = run.queue.shift()!;
    const state = threadState(run, side);
    if (item.kind === 'message') {
      await storeMessage(run, side, state, item.message);
      continue;
    }
    const call = { id: `queued_${randomUUID()}`, name: item.name, arguments: JSON.stringify(item.args) };
    await storeMessage(run, side, state, { role: 'assistant', content: null, toolCalls: [call], meta: { queued: true } });
    await executeToolCalls(run, side, [call]);
  }
}
