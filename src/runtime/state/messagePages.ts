/** Paging through a thread's messages (getMessages for ThreadState and for thread views). */
import type { GetMessagesOptions, ThreadMessage } from '../../definitions/types.js';

/** One page of a thread's messages, as getMessages({ limit, offset, order }) describes it. */
export function pageOf(
  all: readonly ThreadMessage[],
  options: GetMessagesOptions,
): { messages: ThreadMessage[]; total: number; hasMore: boolean } {
  const ordered = options.order === 'desc' ? [...all].reverse() : all;
  const offset = Math.max(0, options.offset ?? 0);
  const end = options.limit === undefined ? ordered.length : offset + Math.max(0, options.limit);
  return { messages: ordered.slice(offset, end), total: all.length, hasMore: end < ordered.length };
}
