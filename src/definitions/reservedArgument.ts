/** The argument every exposed tool takes to continue a conversation (no prompt may declare it). */
export const RESERVED_ARGUMENT = 'thread_id';
