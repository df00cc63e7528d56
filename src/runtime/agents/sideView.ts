/**
 * What one side of a dual_ai session sees of the thread. Each side sees its
 * own messages as they are (its answers as `assistant`, its tool calls and
 * results) and the other side's answers as `user` messages, without the
 * other side's tool calls or results. The caller's messages are addressed to
 * side A: side B does not see them. A turn that ended through a stop tool
 * with `stopToolResponseProperty` shows the other side that response.
 */
import type { StoredMessage } from '../../store/types.js';
import { textOf } from '../../models/wire.js';

/** Meta key of a stop tool's result that holds the turn's response. */
export const TURN_RESPONSE_META = 'turnResponse';

export function sideView(messages: readonly StoredMessage[], side: 'a' | 'b'): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (const message of messages) {
    if ((message.side ?? 'a') === side) {
      out.push(message);
      continue;
    }
    if (message.role === 'assistant') {
      const text = textOf(message.content);
      if (text.trim() !== '') out.push(asOtherSide(message, text));
    } else if (message.role === 'tool' && typeof message.meta?.[TURN_RESPONSE_META] === 'string') {
      out.push(asOtherSide(message, message.meta[TURN_RESPONSE_META]));
    }
  }
  return out;
}

function asOtherSide(message: StoredMessage, text: string): StoredMessage {
  return { id: message.id, threadId: message.threadId, seq: message.seq, createdAt: message.createdAt, role: 'user', content: text };
}
