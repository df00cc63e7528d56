/** Every message a run stores goes through here: hooks, secret redaction, then the store. */
import type { ThreadState } from '../../definitions/types.js';
import type { NewMessage, StoredMessage } from '../../store/types.js';
import type { Run, Side } from '../run/types.js';

export async function storeMessage(run: Run, side: Side, state: ThreadState, message: NewMessage): Promise<StoredMessage> {
  // In a dual_ai session every message belongs to a side: that decides who sees it how.
  const owned = run.dual && message.side === undefined ? { ...message, side: side.key } : message;
  const prepared = await side.hooks.transform('before_create_message', state, owned);
  const stored = await run.services.store.appendMessage(run.thread.id, run.redactor.deep(prepared));
  run.messages.push(stored);
  await side.hooks.notify('after_create_message', state, stored);
  return stored;
}
