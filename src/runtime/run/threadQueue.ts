/**
 * Queuing a message on a thread from outside its running turn (a subagent's
 * report, `queueMessage` after a turn ended): the run now active on the
 * thread in this process takes it before its next step of that side,
 * otherwise it starts a turn of its own.
 */
import type { NewMessage } from '../../store/types.js';
import type { Services } from './types.js';

export function queueOnThread(services: Services, threadId: string, message: NewMessage, side: 'a' | 'b' = 'a'): void {
  const active = services.activeRuns.get(threadId);
  if (active && !active.finished) active.queue.push({ side: active.sides[side] ? side : 'a', kind: 'message', message });
  else services.startQueuedTurn(threadId, message);
}
