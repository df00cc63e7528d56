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
  const owned = ownedBy(run, side.key, message);
  // Checked here, not only inside the runner: every message of every run passes, and an await costs a turn.
  const prepared = side.hooks.has('before_create_message')
    ? await side.hooks.transform('before_create_message', state, owned, [], isNewMessage)
    : owned;
  const stored = await run.services.store.appendMessage(run.thread.id, run.redactor.deep(prepared), options);
  // A message written now takes what waited with it.
  run.openingWaits = options?.withNextWrite === true;
  run.messages.push(stored);
  if (side.hooks.has('after_create_message')) await side.hooks.notify('after_create_message', state, stored);
  return stored;
}

/**
 * Writes a new thread's opening messages now if they still wait for a write: before its id reaches
 * anything else (a sub-prompt's or subagent's thread names it as parent) and when the run ends
 * having stored nothing after them (a hook stopped it before the model was called, say).
 */
export async function writeOpening(run: Run): Promise<void> {
  if (!run.openingWaits) return;
  // An update with nothing to change writes the thread, and what waits with it.
  await run.services.store.updateThread(run.thread.id, {});
  run.openingWaits = false;
}

/** In a dual_ai session every message belongs to a side: that decides who sees it how. */
export function ownedBy(run: Run, side: 'a' | 'b', message: NewMessage): NewMessage {
  return run.dual && message.side === undefined ? { ...message, side } : message;
}

function isNewMessage(value: unknown): value is NewMessage {
  const role = (value as { role?: unknown } | null)?.role;
  return typeof value === 'object' && value !== null && (role === 'user' || role === 'assistant' || role === 'system' || role === 'tool');
}
