/**
 * The default store: plain files under a directory (`.agentport/` unless told otherwise).
 *
 * ```
 * <dir>/secret.key                      generated key for secret variables (mode 0600), see secretKey.ts
 * <dir>/threads/<id>/thread.json        the ThreadRecord + format version, replaced atomically
 * <dir>/threads/<id>/messages.jsonl     one record per line, append-only (see below)
 * <dir>/threads/<id>/files/...          the thread's files, bytes exactly as written
 * <dir>/threads/<id>/files.json         metadata (AttachmentRef) of every file, by thread path
 * <dir>/threads/<id>/variables.json     variables + format version; secret values AES-256-GCM encrypted
 * ```
 *
 * Metadata lives beside `files/`, not inside it, so no thread path can collide with it.
 * Nothing is read at construction; a thread's files are read when that thread is used.
 *
 * messages.jsonl holds a StoredMessage per line, plus operation records written by
 * `updateMessage` and `deleteMessages`:
 *
 * ```
 * {"op":"update","id":"<message id>","patch":{"content":...,"meta":...,"reasoning":...}}
 * {"op":"delete","ids":["<message id>",...]}
 * ```
 *
 * Reading replays the lines in order, so an operation changes the messages written before it and
 * never one appended later. Operation records have neither `seq` nor `role`, which every message
 * record has, so neither kind is mistaken for the other. Deleted messages stay in the file, which
 * is how `seq` keeps growing past them after a restart.
 *
 * Durability: JSON files are replaced with temp file + rename, so a killed process leaves the
 * old or the new version, never a mix. Nothing is fsynced (thread creation must stay cheap), so
 * a power loss may lose the last writes; a later PostgreSQL store is the answer for that.
 * One process owns a directory at a time: the per-thread ordering is in memory.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile, rename, rmdir, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError } from '../errors.js';
import {
  KeyedQueue,
  applyMessagePatch,
  buildFileRef,
  buildMessage,
  buildThread,
  copyBytes,
  errnoCode,
  isStoredMessage,
  isThreadRecord,
  jsonCopy,
  mergeByName,
  messageNotFound,
  patchThread,
  pathClash,
  threadNotFound,
  validateMessageIds,
  validateMessagePatch,
  validateVariables,
  warn,
} from './internal.js';
import {
  assertValidThreadId,
  directoryPrefix,
  isInside,
  isValidThreadId,
  matchesPrefix,
  normalizeThreadPath,
  resolveThreadFile,
} from './paths.js';
import { acquireThreadLock } from './threadLock.js';
import { SECRET_KEY_BYTES, decryptSecret, encryptSecret, isEncryptedValue, loadSecretKey, type EncryptedValue } from './secretKey.js';
import type { AttachmentRef, FileInfo, MessagePatch, NewMessage, Store, StoredMessage, ThreadRecord, VariableValue } from './types.js';

/** Default data directory, relative to the working directory. */
export const DEFAULT_STORE_DIR = '.agentport';

/**
 * Version of the on-disk format, written into thread.json, files.json and variables.json.
 * The thread.json version also covers the layout of the thread folder and messages.jsonl.
 *
 * The operation records of messages.jsonl came without a bump: they only add a kind of line,
 * and files without them read exactly as before. An agentport from before them still reads such
 * a file, but skips each operation line with a "corrupt line" warning, so it shows edited and
 * deleted messages as first written (its seq numbering stays right: deleted lines are still there).
 */
export const FILE_STORE_FORMAT_VERSION = 1;

/** Options of {@link FileStore}. */
export interface FileStoreOptions {
  /** Root directory; default {@link DEFAULT_STORE_DIR}. Resolved against the working directory once. */
  dir?: string;
  /**
   * 32-byte key for secret variables. Default: `AGENTPORT_SECRET_KEY`, else `<dir>/secret.key`
   * (generated on first need), loaded only when a secret is first written or read.
   */
  secretKey?: Buffer;
}

type StoredVariable =
  | { name: string; secret: false; scoped?: boolean; value: string }
  | { name: string; secret: true; scoped?: boolean; encrypted: EncryptedValue };

interface FileIndex {
  version: number;
  files: Record<string, AttachmentRef>;
}

/** Where the next append to a thread's messages.jsonl goes. */
interface AppendState {
  lastSeq: number;
  /** The file ends with a complete record but no newline (cut exactly before it). */
  needsNewline: boolean;
  /** The file's size as this process last left it: another process that appended changed it. */
  bytes: number;
}

/**
 * A line of messages.jsonl that changes earlier messages. It never has `seq` or `role`, which
 * every message line has, so the two kinds cannot be confused.
 */
type MessageOp = { op: 'update'; id: string; patch: MessagePatch } | { op: 'delete'; ids: string[] };

/** A parsed line of messages.jsonl. */
type MessageLine = { message: StoredMessage } | { op: MessageOp };

/**
 * Replays message and operation lines in file order, in time linear in their size: messages are
 * kept in slots, found by id through an index, and a deleted slot is emptied rather than spliced.
 */
class MessageReplay {
  private readonly slots: (StoredMessage | undefined)[] = [];
  private readonly slotsById = new Map<string, number[]>();
  /** Highest seq of any message line, deleted ones included. */
  lastSeq = 0;

  add(line: MessageLine): void {
    if ('message' in line) {
      const { message } = line;
      const slots = this.slotsById.get(message.id);
      if (slots === undefined) this.slotsById.set(message.id, [this.slots.length]);
      else slots.push(this.slots.length);
      this.slots.push(message);
      this.lastSeq = Math.max(this.lastSeq, message.seq);
      return;
    }
    const { op } = line;
    if (op.op === 'update') {
      for (const slot of this.slotsById.get(op.id) ?? []) {
        const message = this.slots[slot];
        if (message !== undefined) this.slots[slot] = applyMessagePatch(message, op.patch);
      }
    } else {
      for (const id of op.ids) {
        for (const slot of this.slotsById.get(id) ?? []) this.slots[slot] = undefined;
        this.slotsById.delete(id);
      }
    }
  }

  messages(): StoredMessage[] {
    return this.slots.filter((m): m is StoredMessage => m !== undefined);
  }
}

interface ParsedMessages {
  /** The messages after replaying every operation. */
  messages: StoredMessage[];
  /** Highest seq ever assigned in the file, deleted messages included. */
  lastSeq: number;
  /** Bytes of complete lines; anything after is an unterminated last line. */
  completeBytes: number;
  /** Kind of the unterminated last line, if any. */
  tail: 'none' | 'record' | 'torn';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compareThreads(a: ThreadRecord, b: ThreadRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Writes a file so that readers see either the old or the new content, never a partial one. */
async function writeAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = path.join(path.dirname(file), `.agentport-tmp-${randomUUID()}`);
  try {
    await writeFile(tmp, data);
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  return writeAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

/** Reads a JSON file written by this store; `undefined` when it does not exist. */
async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AgentportError('CORRUPT_DATA', `${file} is not valid JSON`, undefined, { cause: err });
  }
  if (!isPlainObject(value)) throw new AgentportError('CORRUPT_DATA', `${file} does not hold a JSON object`);
  const version = value.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new AgentportError('CORRUPT_DATA', `${file} has no valid format "version"`);
  }
  if (version > FILE_STORE_FORMAT_VERSION) {
    throw new AgentportError(
      'UNSUPPORTED_VERSION',
      `${file} has format version ${version}, newer than this agentport supports (${FILE_STORE_FORMAT_VERSION}); upgrade agentport`,
    );
  }
  return value;
}

/** Persists threads, messages, files and variables as files under one directory. */
export class FileStore implements Store {
  /** Absolute root directory. */
  readonly dir: string;
  private readonly threadsDir: string;
  private readonly givenKey: Buffer | undefined;
  private keyPromise: Promise<Buffer> | undefined;
  // All writes to a thread, and reads that must see them, go through this queue.
  private readonly queue = new KeyedQueue();
  private readonly threads = new Map<string, ThreadRecord>();
  private readonly appendState = new Map<string, AppendState>();
  // Warn once per corrupt line, not on every read of the thread.
  private readonly warned = new Set<string>();
  // Saves a mkdir per thread creation once the threads folder is known to exist.
  private threadsDirReady = false;

  /**
   * @param options `dir` (default `.agentport`) and an optional `secretKey`.
   * @throws AgentportError `SECRET_KEY_INVALID` when `secretKey` is given but is not 32 bytes.
   */
  constructor(options: FileStoreOptions = {}) {
    this.dir = path.resolve(options.dir ?? DEFAULT_STORE_DIR);
    this.threadsDir = path.join(this.dir, 'threads');
    if (options.secretKey !== undefined && (!Buffer.isBuffer(options.secretKey) || options.secretKey.length !== SECRET_KEY_BYTES)) {
      throw new AgentportError('SECRET_KEY_INVALID', `FileStore secretKey must be a Buffer of ${SECRET_KEY_BYTES} bytes`);
    }
    this.givenKey = options.secretKey;
  }

  private threadDir(id: string): string {
    return path.join(this.threadsDir, id);
  }

  async lockThread(threadId: string, waitMs: number): Promise<() => Promise<void>> {
    assertValidThreadId(threadId);
    const release = await acquireThreadLock(path.join(this.dir, 'locks'), threadId, waitMs);
    // Another process may have written the thread since this one last read it: what it appended shows in
    // the size of messages.jsonl (the record itself is small to re-read).
    await this.queue.run(threadId, async () => {
      this.threads.delete(threadId);
      const known = this.appendState.get(threadId);
      const size = known && (await stat(this.messagesFile(threadId)).catch(() => undefined))?.size;
      if (!known || size !== known.bytes) this.appendState.delete(threadId);
    });
    return release;
  }

  private filesDir(id: string): string {
    return path.join(this.threadDir(id), 'files');
  }

  private key(): Promise<Buffer> {
    if (this.keyPromise === undefined) {
      const pending = this.givenKey !== undefined ? Promise.resolve(this.givenKey) : loadSecretKey(this.dir);
      // Forget a failure so that fixing the variable or the file does not need a restart.
      this.keyPromise = pending.catch((err: unknown) => {
        this.keyPromise = undefined;
        throw err;
      });
    }
    return this.keyPromise;
  }

  // ---- threads -------------------------------------------------------------------------

  private async readThreadFile(id: string): Promise<ThreadRecord | undefined> {
    const file = path.join(this.threadDir(id), 'thread.json');
    const value = await readJson(file);
    if (value === undefined) return undefined;
    const { version: _version, ...record } = value;
    if (!isThreadRecord(record) || record.id !== id) {
      throw new AgentportError('CORRUPT_DATA', `${file} does not hold a valid record for thread ${id}`);
    }
    return record;
  }

  private async writeThreadFile(record: ThreadRecord): Promise<void> {
    await writeJsonAtomic(path.join(this.threadDir(record.id), 'thread.json'), { version: FILE_STORE_FORMAT_VERSION, ...record });
  }

  /** The cached record (not a copy), reading thread.json the first time. */
  private async loadThread(id: string): Promise<ThreadRecord | undefined> {
    const cached = this.threads.get(id);
    if (cached !== undefined) return cached;
    const record = await this.readThreadFile(id);
    if (record === undefined) return undefined;
    // A write that finished while we were reading is newer: keep it.
    const raced = this.threads.get(id);
    if (raced !== undefined) return raced;
    this.threads.set(id, record);
    return record;
  }

  private async requireThread(id: string): Promise<ThreadRecord> {
    const record = await this.loadThread(id);
    if (record === undefined) throw threadNotFound(id);
    return record;
  }

  /** {@inheritDoc Store.createThread} */
  async createThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): Promise<ThreadRecord> {
    const record = buildThread(init);
    return this.queue.run(record.id, async () => {
      if (!this.threadsDirReady) {
        await mkdir(this.threadsDir, { recursive: true, mode: 0o700 });
        this.threadsDirReady = true;
      }
      const dir = this.threadDir(record.id);
      let fresh = true;
      try {
        await mkdir(dir);
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') this.threadsDirReady = false; // removed behind our back
        if (errnoCode(err) !== 'EEXIST') throw err;
        // A folder without thread.json is what a crash during creation leaves; reuse it.
        if ((await this.loadThread(record.id)) !== undefined) {
          throw new AgentportError('THREAD_EXISTS', `Thread ${record.id} already exists`);
        }
        fresh = false;
      }
      await this.writeThreadFile(record);
      this.threads.set(record.id, record);
      // A brand-new folder has no messages: skip reading messages.jsonl on the first append.
      if (fresh) this.appendState.set(record.id, { lastSeq: 0, needsNewline: false, bytes: 0 });
      return jsonCopy(record, 'thread');
    });
  }

  /** {@inheritDoc Store.getThread} */
  async getThread(id: string): Promise<ThreadRecord | undefined> {
    if (!isValidThreadId(id)) return undefined;
    const record = await this.loadThread(id);
    return record === undefined ? undefined : jsonCopy(record, 'thread');
  }

  /** {@inheritDoc Store.updateThread} */
  async updateThread(id: string, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): Promise<ThreadRecord> {
    assertValidThreadId(id);
    return this.queue.run(id, async () => {
      const next = patchThread(await this.requireThread(id), patch);
      await this.writeThreadFile(next);
      this.threads.set(id, next);
      return jsonCopy(next, 'thread');
    });
  }

  /** {@inheritDoc Store.listThreads} Unreadable threads are skipped with a warning. */
  async listThreads(): Promise<ThreadRecord[]> {
    let entries;
    try {
      entries = await readdir(this.threadsDir, { withFileTypes: true });
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return [];
      throw err;
    }
    const records = await Promise.all(
      entries
        .filter((e) => e.isDirectory() && isValidThreadId(e.name))
        .map(async (e) => {
          try {
            return await this.loadThread(e.name);
          } catch (err) {
            warn(`skipping thread ${e.name}: ${err instanceof Error ? err.message : String(err)}`);
            return undefined;
          }
        }),
    );
    return records
      .filter((r): r is ThreadRecord => r !== undefined)
      .map((r) => jsonCopy(r, 'thread'))
      .sort(compareThreads);
  }

  // ---- messages ------------------------------------------------------------------------

  private messagesFile(id: string): string {
    return path.join(this.threadDir(id), 'messages.jsonl');
  }

  /**
   * Parses messages.jsonl, replaying operation records in order. An unterminated last line is
   * what a process killed mid-append leaves: it is dropped silently (no append, update or delete
   * ever reported it written), whether it was to be a message or an operation. A bad line in
   * the middle means the file was damaged otherwise: it is skipped with a warning so the rest of
   * the conversation survives.
   */
  private async readMessages(id: string): Promise<ParsedMessages> {
    const file = this.messagesFile(id);
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return { messages: [], lastSeq: 0, completeBytes: 0, tail: 'none' };
      throw err;
    }
    const completeBytes = buf.lastIndexOf(0x0a) + 1;
    const replay = new MessageReplay();
    const lines = buf.subarray(0, completeBytes).toString('utf8').split('\n');
    lines.pop(); // the empty string after the final newline
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const parsed = parseLine(line);
      if (parsed === undefined) {
        const key = `${file}:${i + 1}`;
        if (!this.warned.has(key)) {
          this.warned.add(key);
          warn(`skipping corrupt line ${i + 1} of ${file}`);
        }
        return;
      }
      replay.add(parsed);
    });
    let tail: ParsedMessages['tail'] = 'none';
    if (completeBytes < buf.length) {
      const last = parseLine(buf.subarray(completeBytes).toString('utf8'));
      if (last === undefined) {
        tail = 'torn';
      } else {
        // Cut exactly before its newline: the record itself is whole.
        tail = 'record';
        replay.add(last);
      }
    }
    return { messages: replay.messages(), lastSeq: replay.lastSeq, completeBytes, tail };
  }

  /** Where the next append goes, repairing a torn last line first (inside the thread's queue). */
  private async appendStateFor(id: string): Promise<AppendState> {
    const known = this.appendState.get(id);
    if (known !== undefined) return known;
    const parsed = await this.readMessages(id);
    if (parsed.tail === 'torn') {
      // Appending after the fragment would glue the next record onto it: cut it off.
      await truncate(this.messagesFile(id), parsed.completeBytes);
      warn(`dropped an incomplete last line of ${this.messagesFile(id)} (an interrupted write)`);
    }
    const size = (await stat(this.messagesFile(id)).catch(() => undefined))?.size ?? 0;
    const state: AppendState = { lastSeq: parsed.lastSeq, needsNewline: parsed.tail === 'record', bytes: size };
    this.appendState.set(id, state);
    return state;
  }

  /** Appends one line to messages.jsonl; call inside the thread's queue with its append state. */
  private async appendLine(threadId: string, state: AppendState, record: StoredMessage | MessageOp): Promise<void> {
    const line = (state.needsNewline ? '\n' : '') + JSON.stringify(record) + '\n';
    try {
      await appendFile(this.messagesFile(threadId), line, 'utf8');
    } catch (err) {
      // Part of the line may be on disk: re-read (and repair) before the next append.
      this.appendState.delete(threadId);
      throw err;
    }
    state.needsNewline = false;
    state.bytes += Buffer.byteLength(line, 'utf8');
  }

  /** {@inheritDoc Store.appendMessage} */
  async appendMessage(threadId: string, message: NewMessage): Promise<StoredMessage> {
    assertValidThreadId(threadId);
    // Validate and copy now: the caller may reuse its object while the append waits its turn.
    const draft = buildMessage(threadId, 0, message);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      const state = await this.appendStateFor(threadId);
      // lastSeq counts deleted messages too (their lines stay in the file): no seq is reused.
      const stored: StoredMessage = { ...draft, seq: state.lastSeq + 1 };
      await this.appendLine(threadId, state, stored);
      state.lastSeq = stored.seq;
      return stored;
    });
  }

  /** {@inheritDoc Store.updateMessage} Appends an `update` record to messages.jsonl. */
  async updateMessage(threadId: string, id: string, patch: MessagePatch): Promise<StoredMessage> {
    assertValidThreadId(threadId);
    const checked = validateMessagePatch(threadId, id, patch);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      // First, so that a torn last line is cut off before it is read around.
      const state = await this.appendStateFor(threadId);
      const { messages } = await this.readMessages(threadId);
      let current: StoredMessage | undefined;
      for (const m of messages) if (m.id === id) current = m;
      if (current === undefined) throw messageNotFound(threadId, id);
      if (Object.keys(checked).length > 0) await this.appendLine(threadId, state, { op: 'update', id, patch: checked });
      return applyMessagePatch(current, checked);
    });
  }

  /** {@inheritDoc Store.deleteMessages} Appends a `delete` record to messages.jsonl. */
  async deleteMessages(threadId: string, ids: readonly string[]): Promise<void> {
    assertValidThreadId(threadId);
    const unique = validateMessageIds(threadId, ids);
    await this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      if (unique.length === 0) return;
      // No need to check which ids exist: replaying the record skips unknown ones, and it never
      // touches a message appended after it, even one that reuses a deleted id.
      await this.appendLine(threadId, await this.appendStateFor(threadId), { op: 'delete', ids: unique });
    });
  }

  /** {@inheritDoc Store.listMessages} */
  async listMessages(threadId: string): Promise<StoredMessage[]> {
    assertValidThreadId(threadId);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      return (await this.readMessages(threadId)).messages;
    });
  }

  // ---- files ---------------------------------------------------------------------------

  private indexFile(id: string): string {
    return path.join(this.threadDir(id), 'files.json');
  }

  private async readIndex(id: string): Promise<FileIndex> {
    const file = this.indexFile(id);
    const value = await readJson(file);
    if (value === undefined) return { version: FILE_STORE_FORMAT_VERSION, files: {} };
    if (!isPlainObject(value.files)) throw new AgentportError('CORRUPT_DATA', `${file} has no "files" object`);
    return { version: FILE_STORE_FORMAT_VERSION, files: value.files as Record<string, AttachmentRef> };
  }

  /** {@inheritDoc Store.writeFile} */
  async writeFile(threadId: string, filePath: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(filePath);
    const ref = buildFileRef(threadPath, data, info);
    const bytes = copyBytes(data); // the caller may reuse its buffer while we wait our turn
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      const filesDir = this.filesDir(threadId);
      await mkdir(filesDir, { recursive: true });
      const { hostPath } = await resolveThreadFile(filesDir, threadPath);
      const index = await this.readIndex(threadId);
      const clash = pathClash(threadPath, Object.keys(index.files));
      if (clash !== undefined) {
        throw new AgentportError('INVALID_PATH', `Cannot write thread file ${JSON.stringify(filePath)}: ${clash}`);
      }
      try {
        await mkdir(path.dirname(hostPath), { recursive: true });
        // Temp file + rename: readers never see half a file, and a symlink planted at the
        // target is replaced rather than followed.
        await writeAtomic(hostPath, bytes);
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY') {
          throw new AgentportError(
            'INVALID_PATH',
            `Cannot write thread file ${JSON.stringify(filePath)}: a file and a directory clash on that path`,
            undefined,
            { cause: err },
          );
        }
        throw err;
      }
      index.files[threadPath] = ref;
      await writeJsonAtomic(this.indexFile(threadId), index);
      return { ...ref };
    });
  }

  /** {@inheritDoc Store.readFile} Only files written through the store (listed in files.json) are found. */
  async readFile(threadId: string, filePath: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(filePath);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      // Check for escapes before anything else, so a planted symlink is an error, not "not found".
      const { hostPath } = await resolveThreadFile(this.filesDir(threadId), threadPath);
      const ref = (await this.readIndex(threadId)).files[threadPath];
      if (ref === undefined) return undefined;
      let buf: Buffer;
      try {
        buf = await readFile(hostPath);
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
        throw err;
      }
      // The bytes on disk are the truth for the size (the index could predate a crash).
      return { data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), ref: { ...ref, size: buf.byteLength } };
    });
  }

  /** {@inheritDoc Store.listFiles} */
  async listFiles(threadId: string, prefix?: string): Promise<AttachmentRef[]> {
    assertValidThreadId(threadId);
    const dir = directoryPrefix(prefix);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      return Object.values((await this.readIndex(threadId)).files)
        .filter((ref) => matchesPrefix(ref.path, dir))
        .map((ref) => ({ ...ref }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    });
  }

  /** {@inheritDoc Store.deleteFile} Only files written through the store (listed in files.json) are found. */
  async deleteFile(threadId: string, filePath: string): Promise<boolean> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(filePath);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      const filesDir = this.filesDir(threadId);
      // As in readFile: a path through a planted symlink is an error, and nothing is removed.
      const { hostPath } = await resolveThreadFile(filesDir, threadPath);
      const index = await this.readIndex(threadId);
      if (index.files[threadPath] === undefined) return false;
      delete index.files[threadPath];
      // Index first: once it is replaced the file is gone for every reader. A crash before the
      // unlink leaves only unlisted bytes, which a later write at that path replaces.
      await writeJsonAtomic(this.indexFile(threadId), index);
      await removeFile(filesDir, hostPath);
      return true;
    });
  }

  // ---- variables -----------------------------------------------------------------------

  private variablesFile(id: string): string {
    return path.join(this.threadDir(id), 'variables.json');
  }

  private async readVariables(id: string): Promise<StoredVariable[]> {
    const file = this.variablesFile(id);
    const value = await readJson(file);
    if (value === undefined) return [];
    const list = value.variables;
    const valid =
      Array.isArray(list) &&
      list.every(
        (v: unknown) =>
          isPlainObject(v) &&
          typeof v.name === 'string' &&
          (v.scoped === undefined || typeof v.scoped === 'boolean') &&
          ((v.secret === false && typeof v.value === 'string') || (v.secret === true && isEncryptedValue(v.encrypted))),
      );
    if (!valid) throw new AgentportError('CORRUPT_DATA', `${file} does not hold a valid "variables" list`);
    return list as StoredVariable[];
  }

  /** Binds a ciphertext to its thread and name, so it cannot be moved to another variable. */
  private static aad(threadId: string, name: string): string {
    return `agentport/variable/v1/${threadId}/${name}`;
  }

  /** {@inheritDoc Store.setVariables} Secret values are encrypted before they reach the disk. */
  async setVariables(threadId: string, values: VariableValue[]): Promise<void> {
    assertValidThreadId(threadId);
    const incoming = validateVariables(threadId, values);
    await this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      const existing = await this.readVariables(threadId);
      const key = incoming.some((v) => v.secret) ? await this.key() : undefined;
      const stored = incoming.map((v): StoredVariable => {
        const base = v.scoped === undefined ? { name: v.name } : { name: v.name, scoped: v.scoped };
        if (!v.secret) return { ...base, secret: false, value: v.value };
        // `key` is set whenever a secret is present (see above).
        return { ...base, secret: true, encrypted: encryptSecret(key as Buffer, v.value, FileStore.aad(threadId, v.name)) };
      });
      await writeJsonAtomic(this.variablesFile(threadId), {
        version: FILE_STORE_FORMAT_VERSION,
        variables: mergeByName(existing, stored),
      });
    });
  }

  /** {@inheritDoc Store.getVariables} */
  async getVariables(threadId: string): Promise<VariableValue[]> {
    assertValidThreadId(threadId);
    return this.queue.run(threadId, async () => {
      await this.requireThread(threadId);
      const stored = await this.readVariables(threadId);
      const key = stored.some((v) => v.secret) ? await this.key() : undefined;
      return stored.map((v): VariableValue => {
        let value: string;
        if (v.secret) {
          try {
            value = decryptSecret(key as Buffer, v.encrypted, FileStore.aad(threadId, v.name));
          } catch (err) {
            throw new AgentportError(
              'SECRET_DECRYPT_FAILED',
              `Cannot decrypt secret variable "${v.name}" of thread ${threadId}: the key (AGENTPORT_SECRET_KEY or ${path.join(this.dir, 'secret.key')}) differs from the one it was stored with, or the file was altered`,
              undefined,
              { cause: err },
            );
          }
        } else {
          value = v.value;
        }
        const out: VariableValue = { name: v.name, value, secret: v.secret };
        if (v.scoped !== undefined) out.scoped = v.scoped;
        return out;
      });
    });
  }

  /** {@inheritDoc Store.close} */
  async close(): Promise<void> {
    await this.queue.idle();
  }
}

function isMessageOp(value: unknown): value is MessageOp {
  if (!isPlainObject(value) || 'seq' in value || 'role' in value) return false;
  if (value.op === 'update') return typeof value.id === 'string' && isPlainObject(value.patch);
  if (value.op === 'delete') return Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'string');
  return false;
}

/** A line of messages.jsonl as a message or an operation; `undefined` when it is neither. */
function parseLine(line: string): MessageLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (isStoredMessage(value)) return { message: value };
  if (isMessageOp(value)) return { op: value };
  return undefined;
}

/**
 * Removes a deleted file's bytes, then the directories it leaves empty (up to, not including,
 * `filesDir`): an empty directory would clash with a later file written at its path.
 */
async function removeFile(filesDir: string, hostPath: string): Promise<void> {
  const root = path.resolve(filesDir);
  try {
    await unlink(hostPath);
  } catch (err) {
    const code = errnoCode(err);
    // The reference is already gone, so the file is deleted for the store either way.
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      warn(`could not remove ${hostPath} of a deleted thread file: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (let dir = path.dirname(hostPath); dir !== root && isInside(root, dir); dir = path.dirname(dir)) {
    try {
      // Fails on a directory that is not empty and on a symlink, which ends the walk.
      await rmdir(dir);
    } catch {
      break;
    }
  }
}
