/** Every message a run stores goes through here: hooks, secret redaction, then the store. */
import type { ThreadState } from '../../definitions/types.js';
import type { AppendOptions, NewMessage, StoredMessage } from '../../store/types.js';
import type { Run, Side } from '../run/types.js';

export async function storeMessage(
  run: Run,
  side: Side,
  state: ThreadState,
  message: NewMessage,
  options?: AppendOptions,
): Promise<StoredMessage> {
  const prepared = await side.hooks.transform('before_create_message', state, ownedBy(run, side.key, message), [], isNewMessage);
  const stored = await run.services.store.appendMessage(run.thread.id, run.redactor.deep(prepared), options);
  run.messages.push(stored);
  await side.hooks.notify('after_create_message', state, stored);
  return stored;
}

/** In a dual_ai session every message belongs to a side: that decides who sees it how. */
export function ownedBy(run: Run, side: 'a' | 'b', message: NewMessage): NewMessage {
  return run.dual && message.side === undefined ? { ...message, side } : message;
}

function isNewMessage(value: unknown): value is NewMessage {
  const role = (value as { role?: unknown } | null)?.role;
  return typeof value === 'object' && value !== null && (role === 'user' || role === 'assistant' || role === 'system' || role === 'tool');
}
