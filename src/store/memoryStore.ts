/**
 * A store that keeps everything in memory: for tests and throwaway runs. It validates and
 * copies exactly like the file store, so code tested against it behaves the same on disk.
 */
import { AgentportError } from '../errors.js';
import {
  applyMessagePatch,
  buildFileRef,
  buildMessage,
  buildThread,
  compareThreads,
  copyBytes,
  jsonCopy,
  mergeByName,
  messageNotFound,
  patchThread,
  pathClash,
  threadNotFound,
  validateMessageIds,
  validateMessagePatch,
  validateVariables,
} from './internal.js';
import {
  assertValidThreadId,
  directoryPrefix,
  isValidThreadId,
  matchesPrefix,
  normalizeThreadPath,
  normalizeThreadPathForWrite,
} from './paths.js';
import type { AttachmentRef, FileInfo, MessagePatch, NewMessage, StoredMessage, Store, ThreadRecord, VariableValue } from './types.js';

interface MemoryThread {
  record: ThreadRecord;
  messages: StoredMessage[];
  /** Highest seq ever assigned, deleted messages included, so that no seq is reused. */
  lastSeq: number;
  files: Map<string, { data: Uint8Array; ref: AttachmentRef }>;
  variables: VariableValue[];
}

/** In-memory {@link Store}. Secrets are kept in clear (nothing is written anywhere). */
export class MemoryStore implements Store {
  // Every operation below runs synchronously once called, so each is atomic on its own and
  // `seq` needs no queue here (the file store, which awaits I/O, has one).
  private readonly threads = new Map<string, MemoryThread>();

  private thread(id: string): MemoryThread {
    assertValidThreadId(id);
    const thread = this.threads.get(id);
    if (thread === undefined) throw threadNotFound(id);
    return thread;
  }

  /** {@inheritDoc Store.createThread} */
  async createThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): Promise<ThreadRecord> {
    const record = buildThread(init);
    if (this.threads.has(record.id)) throw new AgentportError('THREAD_EXISTS', `Thread ${record.id} already exists`);
    this.threads.set(record.id, { record, messages: [], lastSeq: 0, files: new Map(), variables: [] });
    return jsonCopy(record, 'thread');
  }

  /** {@inheritDoc Store.getThread} */
  async getThread(id: string): Promise<ThreadRecord | undefined> {
    if (!isValidThreadId(id)) return undefined;
    const thread = this.threads.get(id);
    return thread === undefined ? undefined : jsonCopy(thread.record, 'thread');
  }

  /** {@inheritDoc Store.updateThread} */
  async updateThread(id: string, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): Promise<ThreadRecord> {
    const thread = this.thread(id);
    thread.record = patchThread(thread.record, patch);
    return jsonCopy(thread.record, 'thread');
  }

  /** {@inheritDoc Store.listThreads} */
  async listThreads(): Promise<ThreadRecord[]> {
    return [...this.threads.values()].map((t) => jsonCopy(t.record, 'thread')).sort(compareThreads);
  }

  /** {@inheritDoc Store.appendMessage} */
  async appendMessage(threadId: string, message: NewMessage): Promise<StoredMessage> {
    const thread = this.thread(threadId);
    const stored = buildMessage(threadId, thread.lastSeq + 1, message);
    thread.messages.push(stored);
    thread.lastSeq = stored.seq;
    return jsonCopy(stored, 'message');
  }

  /** {@inheritDoc Store.updateMessage} */
  async updateMessage(threadId: string, id: string, patch: MessagePatch): Promise<StoredMessage> {
    const thread = this.thread(threadId);
    const checked = validateMessagePatch(threadId, id, patch);
    let updated: StoredMessage | undefined;
    thread.messages = thread.messages.map((m) => {
      if (m.id !== id) return m;
      updated = applyMessagePatch(m, checked);
      return updated;
    });
    if (updated === undefined) throw messageNotFound(threadId, id);
    return jsonCopy(updated, 'message');
  }

  /** {@inheritDoc Store.deleteMessages} */
  async deleteMessages(threadId: string, ids: readonly string[]): Promise<void> {
    const thread = this.thread(threadId);
    const doomed = new Set(validateMessageIds(threadId, ids));
    if (doomed.size > 0) thread.messages = thread.messages.filter((m) => !doomed.has(m.id));
  }

  /** {@inheritDoc Store.listMessages} */
  async listMessages(threadId: string): Promise<StoredMessage[]> {
    return jsonCopy(this.thread(threadId).messages, 'messages');
  }

  /** {@inheritDoc Store.writeFile} */
  async writeFile(threadId: string, path: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef> {
    const thread = this.thread(threadId);
    const threadPath = normalizeThreadPathForWrite(path);
    const ref = buildFileRef(threadPath, data, info);
    const clash = pathClash(threadPath, thread.files.keys());
    if (clash !== undefined) {
      throw new AgentportError('INVALID_PATH', `Cannot write thread file ${JSON.stringify(path)}: ${clash}`);
    }
    thread.files.set(threadPath, { data: copyBytes(data), ref });
    return { ...ref };
  }

  /** {@inheritDoc Store.readFile} */
  async readFile(threadId: string, path: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined> {
    const thread = this.thread(threadId);
    const file = thread.files.get(normalizeThreadPath(path));
    return file === undefined ? undefined : { data: copyBytes(file.data), ref: { ...file.ref } };
  }

  /** {@inheritDoc Store.listFiles} */
  async listFiles(threadId: string, prefix?: string): Promise<AttachmentRef[]> {
    const thread = this.thread(threadId);
    const dir = directoryPrefix(prefix);
    return [...thread.files.values()]
      .filter((f) => matchesPrefix(f.ref.path, dir))
      .map((f) => ({ ...f.ref }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** {@inheritDoc Store.deleteFile} */
  async deleteFile(threadId: string, path: string): Promise<boolean> {
    const thread = this.thread(threadId);
    return thread.files.delete(normalizeThreadPath(path));
  }

  /** {@inheritDoc Store.setVariables} */
  async setVariables(threadId: string, values: VariableValue[]): Promise<void> {
    const thread = this.thread(threadId);
    thread.variables = mergeByName(thread.variables, validateVariables(threadId, values));
  }

  /** {@inheritDoc Store.getVariables} */
  async getVariables(threadId: string): Promise<VariableValue[]> {
    return this.thread(threadId).variables.map((v) => ({ ...v }));
  }

  /** {@inheritDoc Store.close} */
  async close(): Promise<void> {
    // Nothing is pending: every operation completes before its promise is returned.
  }
}
