/**
 * The persistence contract shared by the runtime and every store implementation
 * (file store by default, memory store for tests, a later PostgreSQL store).
 *
 * Everything a store hands out is a copy: callers may mutate what they get back
 * without touching what is stored, and what they pass in is copied on the way in.
 *
 * Stores throw `AgentportError` (src/errors.ts) with the codes `THREAD_NOT_FOUND`,
 * `THREAD_EXISTS`, `INVALID_THREAD_ID`, `INVALID_PATH`, `INVALID_ARGUMENTS`, `SECRET_KEY_INVALID`,
 * `SECRET_DECRYPT_FAILED`, `CORRUPT_DATA` and `UNSUPPORTED_VERSION`. Messages name the thread,
 * path or variable concerned, never a variable's value (PR-16).
 */
import type { AttachmentRef } from '../definitions/types.js';
import type { AgentportError } from '../errors.js';

/** Who wrote a message. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One part of a multi-part message content. */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url?: string; path?: string; mimeType?: string; description?: string; detail?: string }
  | { type: 'file'; url?: string; path?: string; mimeType?: string; name?: string };

/** A tool call as the model requested it. */
export interface StoredToolCall {
  id: string;
  name: string;
  /** Raw JSON text from the model; kept unparsed because models sometimes send invalid JSON. */
  arguments: string;
}

/** A file in a thread's file system (spec/tools.md §5.3); paths are normalised and start with `/`. */
export type { AttachmentRef } from '../definitions/types.js';

/** A message as persisted in a thread. */
export interface StoredMessage {
  id: string;
  threadId: string;
  /**
   * Assigned by the store: 1-based, unique and increasing per thread, in append order.
   * Consecutive until messages are deleted: deletion leaves gaps, and a deleted seq is never reused.
   */
  seq: number;
  /** ISO 8601 timestamp assigned by the store. */
  createdAt: string;
  role: Role;
  content: string | ContentPart[] | null;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  toolName?: string;
  toolStatus?: 'success' | 'error';
  attachments?: AttachmentRef[];
  reasoning?: string;
  side?: 'a' | 'b';
  meta?: Record<string, unknown>;
}

/** What a caller appends; the store assigns `threadId`, `seq`, `createdAt` and (unless given) `id`. */
export type NewMessage = Omit<StoredMessage, 'id' | 'threadId' | 'seq' | 'createdAt'> & { id?: string };

/** Lifecycle state of a thread. */
/** `interrupted`: the process running it stopped (shutdown, crash) before the run ended. */
export type ThreadStatus = 'idle' | 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** A conversation thread. */
export interface ThreadRecord {
  id: string;
  /** Name of the prompt or agent the thread runs. */
  prompt: string;
  parentId?: string;
  createdAt: string;
  /** Changes when the record itself changes (status or meta), not on every message. */
  updatedAt: string;
  status: ThreadStatus;
  meta?: Record<string, unknown>;
}

/** A thread variable (tenv). Secret values are encrypted at rest by stores that persist. */
export interface VariableValue {
  name: string;
  value: string;
  secret: boolean;
  scoped?: boolean;
}

/** Metadata given when a file is written into a thread. */
export interface FileInfo {
  mimeType: string;
  /** Defaults to the last segment of the path. */
  name?: string;
  width?: number;
  height?: number;
  description?: string;
}

/** The message fields {@link Store.updateMessage} can replace. */
export type MessagePatch = Partial<Pick<StoredMessage, 'content' | 'meta' | 'reasoning'>>;

/** How an append may be written. */
export interface AppendOptions {
  /**
   * The message may wait for the thread's next write, when the thread was created here and
   * nothing of it is stored yet: a new thread's opening messages then go to disk or to the
   * database together with the first answer, in one write. Any other write or a lock of the
   * thread writes them first, and `close` writes what still waits; reads through the same store
   * object see them at once, other processes only once they are written. Stores that cannot wait
   * write at once.
   */
  withNextWrite?: boolean;
}

/**
 * Persistence of threads, messages, files and variables.
 *
 * Every method except `getThread` and `createThread` throws an `AgentportError` with code
 * `THREAD_NOT_FOUND` when the thread does not exist. Thread file paths are validated
 * (TL-7) and a bad one is an `AgentportError` with code `INVALID_PATH`; other malformed
 * arguments are `INVALID_ARGUMENTS`.
 */
export interface Store {
  /** Creates a thread (`status: 'idle'`). A given `id` must match the safe id pattern and be unused. */
  createThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): Promise<ThreadRecord>;
  /** The thread, or `undefined` when there is none with that id (or the id is not a valid id). */
  getThread(id: string): Promise<ThreadRecord | undefined>;
  /** Sets `status` and/or replaces `meta` (no deep merge), and bumps `updatedAt`. */
  updateThread(id: string, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): Promise<ThreadRecord>;
  /** All threads, oldest first. */
  listThreads(): Promise<ThreadRecord[]>;
  /**
   * Appends a message. Appends to one thread are serialized, so `seq` is unique and increasing:
   * 1..N with no gaps as long as nothing is deleted. Each append takes the seq after the highest
   * one ever assigned in the thread, deleted messages included, so a deleted seq is never reused.
   */
  appendMessage(threadId: string, message: NewMessage, options?: AppendOptions): Promise<StoredMessage>;
  /**
   * The thread's messages in `seq` order, including every append, update and deletion started
   * before this call. After deletions the seqs have gaps (e.g. 1, 2, 5).
   */
  listMessages(threadId: string): Promise<StoredMessage[]>;
  /**
   * Replaces the given fields of a message (`meta` is replaced, not merged; a field given as
   * `undefined` is left as it is) and returns the updated message. `id`, `seq`, `createdAt` and
   * every other field are unchanged. Ids should be unique in a thread (`appendMessage` does not
   * check): if several messages share `id`, all of them are changed and the last one is returned.
   * An `id` no message has is `INVALID_ARGUMENTS`.
   */
  updateMessage(
    threadId: string,
    id: string,
    patch: Partial<Pick<StoredMessage, 'content' | 'meta' | 'reasoning'>>,
  ): Promise<StoredMessage>;
  /**
   * Removes the messages with these ids; ids no message has are ignored. The remaining messages
   * keep their `seq`, and later appends still continue after the highest seq ever assigned.
   */
  deleteMessages(threadId: string, ids: readonly string[]): Promise<void>;
  /** Stores bytes unchanged at a thread path (replacing any file there) and returns its reference. */
  writeFile(threadId: string, path: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef>;
  /** The file's bytes and reference, or `undefined` when there is no file at that path. */
  readFile(threadId: string, path: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined>;
  /** Files at or under the directory `prefix` (default `/`), sorted by path. */
  listFiles(threadId: string, prefix?: string): Promise<AttachmentRef[]>;
  /** Removes the file at a thread path, bytes and reference; `true` if there was one, `false` otherwise. */
  deleteFile(threadId: string, path: string): Promise<boolean>;
  /** Merges by name: a value replaces the earlier entry of the same name (value, secret and scoped). */
  setVariables(threadId: string, values: VariableValue[]): Promise<void>;
  /** All variables in first-set order, secrets decrypted for the runtime. */
  getVariables(threadId: string): Promise<VariableValue[]>;
  /**
   * Takes the thread's turn lock across processes sharing this store (waiting
   * up to `waitMs`, then THREAD_BUSY), and drops what this process cached of
   * the thread, since another may have written it. Resolves with the release.
   * Stores used by one process only may leave it out.
   *
   * A store whose lock can be lost while held (the PostgreSQL store's, with the
   * connection holding it; the file store's, taken over once its heartbeat is
   * stale) calls `onLost` once when that happens, with a `THREAD_LOCK_LOST`
   * error: another process may take the thread from then on, so the holder must
   * stop writing it. The release then leaves the lock to whoever holds it now.
   */
  lockThread?(threadId: string, waitMs: number, onLost?: (error: AgentportError) => void): Promise<() => Promise<void>>;
  /** Waits for pending writes; the store should not be used afterwards. */
  close?(): Promise<void>;
}
