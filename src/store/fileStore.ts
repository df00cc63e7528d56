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
 * Cost: a thread costs no I/O until it has something to keep. Its folder and thread.json
 * (written once, exclusively) appear with its first message, variable, file or update. Appends go
 * to messages.jsonl through a descriptor kept open (at most {@link MAX_OPEN_FILES}, least recently
 * used closed first) with one synchronous write, so a message costs one system call, not a trip
 * through the thread pool. What a thread's messages.jsonl holds is kept parsed (within a
 * {@link MESSAGE_CACHE_BYTES} budget), so a turn does not re-read its history.
 *
 * Durability: appended lines reach the disk by group commit: every file written to is fsynced
 * within {@link FSYNC_WITHIN_MS} ms, off the reply path, and on close. A power loss may lose what
 * was written in that window; a killed process loses nothing it was told was written. JSON files
 * are replaced with temp file + rename, so a killed process leaves the old or the new version,
 * never a mix, and an interrupted append leaves at most a torn last line, which reading drops.
 * Several processes may share the directory: a turn takes the thread's lock (lockThread), and the
 * cached state of a thread is checked against the file's size when the lock is taken.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsync, mkdirSync, openSync, statSync, writeFileSync, writeSync, type Dirent } from 'node:fs';
import { mkdir, readdir, readFile, rename, rmdir, stat, truncate, unlink, writeFile } from 'node:fs/promises';
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
const DEFAULT_STORE_DIR = '.agentport';

/** Appended lines are on disk (fsynced) at most this long after the append returned. */
const FSYNC_WITHIN_MS = 10;
/** messages.jsonl descriptors kept open; the least recently used is closed beyond this. */
const MAX_OPEN_FILES = 64;
/** Parsed messages kept in memory, all threads together (approximate bytes of their lines). */
const MESSAGE_CACHE_BYTES = 64 * 1024 * 1024;
/** Thread records kept in memory beyond the ones not yet written. */
const THREAD_CACHE_SIZE = 10_000;

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
  /** The file's messages, parsed, while they fit the cache budget. */
  replay?: MessageReplay;
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
  replay: MessageReplay;
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
  /** Threads created here that have nothing on disk yet (see materialize). */
  private readonly unwritten = new Set<string>();
  private readonly appendState = new Map<string, AppendState>();
  /** Open messages.jsonl descriptors by thread, least recently used first. */
  private readonly openFiles = new Map<string, number>();
  /** Descriptors written since their last fsync. */
  private readonly dirty = new Set<number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private cachedBytes = 0;
  /** thread.json as this process last read or wrote it (see fileStamp). */
  private readonly threadStamps = new Map<string, string | undefined>();
  /** Stored variables by thread, with the stamp of variables.json when read or written. */
  private readonly variables = new Map<string, StoredVariable[]>();
  private readonly variableStamps = new Map<string, string | undefined>();
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
      if (this.variables.has(threadId) && this.variableStamps.get(threadId) !== fileStamp(this.variablesFile(threadId))) {
        this.variables.delete(threadId);
      }
      // The record is re-read only if thread.json changed since this process last read or wrote it.
      if (
        !this.unwritten.has(threadId) &&
        this.threadStamps.get(threadId) !== fileStamp(path.join(this.threadDir(threadId), 'thread.json'))
      ) {
        this.threads.delete(threadId);
      }
      const known = this.appendState.get(threadId);
      if (known && !this.unwritten.has(threadId)) {
        const size = fileSize(this.messagesFile(threadId));
        if (size !== known.bytes) this.forgetMessages(threadId);
      }
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
    const stamp = fileStamp(file);
    const value = await readJson(file);
    this.threadStamps.set(id, stamp);
    if (value === undefined) return undefined;
    const { version: _version, ...record } = value;
    if (!isThreadRecord(record) || record.id !== id) {
      throw new AgentportError('CORRUPT_DATA', `${file} does not hold a valid record for thread ${id}`);
    }
    return record;
  }

  private async writeThreadFile(record: ThreadRecord): Promise<void> {
    const file = path.join(this.threadDir(record.id), 'thread.json');
    await writeJsonAtomic(file, { version: FILE_STORE_FORMAT_VERSION, ...record });
    this.threadStamps.set(record.id, fileStamp(file));
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
    this.remember(record);
    return record;
  }

  /** Caches a record; beyond the cache's size the oldest written ones are dropped (they are on disk). */
  private remember(record: ThreadRecord): void {
    this.threads.delete(record.id);
    this.threads.set(record.id, record);
    if (this.threads.size <= THREAD_CACHE_SIZE + this.unwritten.size) return;
    for (const id of this.threads.keys()) {
      if (this.threads.size <= THREAD_CACHE_SIZE + this.unwritten.size) break;
      if (!this.unwritten.has(id)) this.threads.delete(id);
    }
  }

  /**
   * Writes a thread created here to disk the first time it has something to keep: its folder
   * and thread.json (exclusive create: written once; later changes replace it atomically).
   * Call inside the thread's queue.
   */
  private materialize(id: string): void {
    if (!this.unwritten.has(id)) return;
    const record = this.threads.get(id)!;
    if (!this.threadsDirReady) {
      mkdirSync(this.threadsDir, { recursive: true, mode: 0o700 });
      this.threadsDirReady = true;
    }
    try {
      mkdirSync(this.threadDir(id));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') {
        // The threads folder was removed behind our back.
        this.threadsDirReady = false;
        mkdirSync(this.threadDir(id), { recursive: true });
      } else if (errnoCode(err) !== 'EEXIST') throw err;
    }
    const file = path.join(this.threadDir(id), 'thread.json');
    try {
      writeFileSync(file, JSON.stringify({ version: FILE_STORE_FORMAT_VERSION, ...record }, null, 2) + '\n', { flag: 'wx' });
    } catch (err) {
      // A folder with a thread.json is another thread's; a crash during creation leaves none.
      if (errnoCode(err) === 'EEXIST') throw new AgentportError('THREAD_EXISTS', `Thread ${id} already exists`);
      throw err;
    }
    this.threadStamps.set(id, fileStamp(file));
    this.unwritten.delete(id);
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
      // A given id may name a thread on disk already; a generated one is new. Nothing is written yet.
      if (this.threads.has(record.id) || (init.id !== undefined && (await this.loadThread(record.id)) !== undefined)) {
        throw new AgentportError('THREAD_EXISTS', `Thread ${record.id} already exists`);
      }
      this.unwritten.add(record.id);
      this.remember(record);
      // A new thread has no messages: nothing to read on the first append.
      this.appendState.set(record.id, { lastSeq: 0, needsNewline: false, bytes: 0, replay: new MessageReplay() });
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
      if (this.unwritten.has(id)) {
        this.threads.set(id, next);
        this.materialize(id);
      } else {
        await this.writeThreadFile(next);
        this.remember(next);
      }
      return jsonCopy(next, 'thread');
    });
  }

  /** {@inheritDoc Store.listThreads} Unreadable threads are skipped with a warning. */
  async listThreads(): Promise<ThreadRecord[]> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.threadsDir, { withFileTypes: true });
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
      entries = [];
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
    // Threads created here with nothing written yet are threads too.
    const listed = new Set(records.map((r) => r?.id));
    const pending = [...this.unwritten].filter((id) => !listed.has(id)).map((id) => this.threads.get(id));
    return [...records, ...pending]
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
      if (errnoCode(err) === 'ENOENT') return { messages: [], replay: new MessageReplay(), lastSeq: 0, completeBytes: 0, tail: 'none' };
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
    return { messages: replay.messages(), replay, lastSeq: replay.lastSeq, completeBytes, tail };
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
    this.cache(id, state, parsed.replay, size);
    return state;
  }

  /** Keeps a thread's parsed messages while the budget allows, dropping the least recently used. */
  private cache(id: string, state: AppendState, replay: MessageReplay, bytes: number): void {
    if (bytes > MESSAGE_CACHE_BYTES / 4) return;
    state.replay = replay;
    this.cachedBytes += bytes;
    // Most recently used last.
    this.appendState.delete(id);
    this.appendState.set(id, state);
    for (const [other, known] of this.appendState) {
      if (this.cachedBytes <= MESSAGE_CACHE_BYTES) break;
      if (other === id || !known.replay) continue;
      known.replay = undefined;
      this.cachedBytes -= known.bytes;
    }
  }

  /** Forgets what is known of a thread's messages.jsonl (another process wrote it, or a write failed). */
  private forgetMessages(id: string): void {
    const known = this.appendState.get(id);
    if (known?.replay) this.cachedBytes -= known.bytes;
    this.appendState.delete(id);
    this.closeFile(id);
  }

  /** The thread's messages, from the cache when it holds them. Call inside the thread's queue. */
  private async currentMessages(id: string): Promise<StoredMessage[]> {
    const state = this.appendState.get(id);
    if (state?.replay) {
      this.appendState.delete(id);
      this.appendState.set(id, state);
      return structuredClone(state.replay.messages());
    }
    return (await this.readMessages(id)).messages;
  }

  private fileFor(threadId: string): number {
    let fd = this.openFiles.get(threadId);
    if (fd !== undefined) {
      this.openFiles.delete(threadId);
      this.openFiles.set(threadId, fd);
      return fd;
    }
    fd = openSync(this.messagesFile(threadId), 'a');
    this.openFiles.set(threadId, fd);
    for (const [other] of this.openFiles) {
      if (this.openFiles.size <= MAX_OPEN_FILES) break;
      this.closeFile(other);
    }
    return fd;
  }

  private closeFile(threadId: string): void {
    const fd = this.openFiles.get(threadId);
    if (fd === undefined) return;
    this.openFiles.delete(threadId);
    if (this.dirty.delete(fd)) {
      // Written since the last group commit: synced before it is closed (off the caller's path).
      fsync(fd, () => closeSync(fd));
    } else closeSync(fd);
  }

  /** Group commit: everything written in the window is fsynced together, once. */
  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushing = this.flush();
    }, FSYNC_WITHIN_MS);
    this.flushTimer.unref();
  }

  private flush(): Promise<void> {
    const fds = [...this.dirty];
    this.dirty.clear();
    return Promise.all(fds.map((fd) => new Promise<void>((resolve) => fsync(fd, () => resolve())))).then(() => undefined);
  }

  /** Appends one line to messages.jsonl; call inside the thread's queue with its append state. */
  private async appendLine(threadId: string, state: AppendState, record: StoredMessage | MessageOp): Promise<void> {
    this.materialize(threadId);
    const line = Buffer.from((state.needsNewline ? '\n' : '') + JSON.stringify(record) + '\n', 'utf8');
    try {
      const fd = this.fileFor(threadId);
      let written = 0;
      while (written < line.length) written += writeSync(fd, line, written);
      this.dirty.add(fd);
      this.scheduleFlush();
    } catch (err) {
      // Part of the line may be on disk: re-read (and repair) before the next append.
      this.forgetMessages(threadId);
      throw err;
    }
    state.needsNewline = false;
    state.bytes += line.length;
    if (state.replay) {
      this.cachedBytes += line.length;
      // The cache keeps its own copy: the caller may change what it was given.
      state.replay.add('seq' in record ? { message: structuredClone(record) } : { op: structuredClone(record) });
    }
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
      const messages = await this.currentMessages(threadId);
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
      return this.currentMessages(threadId);
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
      this.materialize(threadId);
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
    const cached = this.variables.get(id);
    if (cached) return cached;
    if (this.unwritten.has(id)) return [];
    const file = this.variablesFile(id);
    const stamp = fileStamp(file);
    const value = await readJson(file);
    if (value === undefined) {
      this.rememberVariables(id, [], stamp);
      return [];
    }
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
    this.rememberVariables(id, list as StoredVariable[], stamp);
    return list as StoredVariable[];
  }

  /** Keeps a thread's stored variables (ciphertexts as stored) with the stamp of their file. */
  private rememberVariables(id: string, list: StoredVariable[], stamp: string | undefined): void {
    this.variables.delete(id);
    this.variables.set(id, list);
    this.variableStamps.set(id, stamp);
    for (const other of this.variables.keys()) {
      if (this.variables.size <= THREAD_CACHE_SIZE) break;
      this.variables.delete(other);
      this.variableStamps.delete(other);
    }
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
      this.materialize(threadId);
      const existing = await this.readVariables(threadId);
      const key = incoming.some((v) => v.secret) ? await this.key() : undefined;
      const stored = incoming.map((v): StoredVariable => {
        const base = v.scoped === undefined ? { name: v.name } : { name: v.name, scoped: v.scoped };
        if (!v.secret) return { ...base, secret: false, value: v.value };
        // `key` is set whenever a secret is present (see above).
        return { ...base, secret: true, encrypted: encryptSecret(key as Buffer, v.value, FileStore.aad(threadId, v.name)) };
      });
      const merged = mergeByName(existing, stored);
      await writeJsonAtomic(this.variablesFile(threadId), { version: FILE_STORE_FORMAT_VERSION, variables: merged });
      this.rememberVariables(threadId, merged, fileStamp(this.variablesFile(threadId)));
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
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushing;
    await this.flush();
    for (const threadId of [...this.openFiles.keys()]) this.closeFile(threadId);
  }
}

/** What tells one version of a small file from another: inode, size and change time. */
function fileStamp(file: string): string | undefined {
  try {
    const info = statSync(file, { bigint: true });
    return `${info.ino}:${info.size}:${info.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** A file's size, 0 when it does not exist (a stat is cheaper done at once than through the pool). */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
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
