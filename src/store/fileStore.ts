/**
 * The default store: plain files under a directory (`.agentport/` unless told otherwise).
 *
 * ```
 * <dir>/secret.key                 generated key for secret variables (mode 0600), see secretKey.ts
 * <dir>/threads/packs/<pack>.jsonl the logs of threads whose id the store generated, many to a pack (packs.ts)
 * <dir>/threads/<id>.jsonl         the log of a thread created with an id of its caller's
 * <dir>/threads/<id>/files/...     the thread's files, bytes exactly as written
 * <dir>/threads/<id>/files.json    metadata (AttachmentRef) of every file, by thread path
 * <dir>/threads/<id>/variables.json  variables + format version; secret values AES-256-GCM encrypted
 * ```
 *
 * The folder `<id>/` exists only once the thread has files or variables. Metadata lives beside
 * `files/`, not inside it, so no thread path can collide with it. Nothing is read at
 * construction; a thread's files are read when that thread is used.
 *
 * A log's first line is `{"version":3,"thread":{...ThreadRecord}}`. Each later line is a
 * StoredMessage or an operation record:
 *
 * ```
 * {"op":"update","id":"<message id>","patch":{"content":...,"meta":...,"reasoning":...}}
 * {"op":"delete","ids":["<message id>",...]}
 * {"op":"thread","set":{"status":...,"updatedAt":...,"meta":...}}
 * ```
 *
 * Reading replays the lines in order, so an operation changes the messages written before it and
 * never one appended later, and the record is the first line with every `thread` line applied.
 * Operation records have neither `seq` nor `role`, which every message record has, so neither kind
 * is mistaken for the other. Deleted messages stay in the file, which is how `seq` keeps growing
 * past them after a restart.
 *
 * Cost: creating a file is the dear part of a write (as much CPU as the rest of a one-step call), so
 * a new thread creates none: its first line goes to the pack new threads share, in the same write
 * as its first message, variable, file or update (a new thread's opening messages may wait for the
 * next write: AppendOptions.withNextWrite, so its first call writes once). Appends go through a
 * descriptor kept open (at most {@link MAX_OPEN_FILES}, least recently used closed first, packs
 * among them) with one synchronous write, so a record costs one system call, not a trip through
 * the thread pool. What a log holds is kept parsed (within a {@link CACHE_LIMITS} budget),
 * so a turn does not re-read its history.
 *
 * Durability: appended lines reach the disk by group commit: every file written to is fsynced
 * within {@link DEFAULT_FSYNC_WITHIN_MS} ms (`fsyncWithinMs`), off the reply path, and on close. A power loss may lose what
 * was written in that window; a killed process loses nothing it was told was written, except
 * opening messages told they may wait (whose thread nobody else knows yet). JSON files
 * are replaced with temp file + rename, so a killed process leaves the old or the new version,
 * never a mix, and an interrupted append leaves at most a torn record, which reading skips (in a
 * log of its own, a torn last line is cut off before the next append). Several processes may share
 * the directory: a turn takes the thread's lock (lockThread), and the cached state of a thread is
 * checked when the lock is taken against its log's size, or its bytes in its pack.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fstatSync, fsync, mkdirSync, openSync, readSync, statSync, unlinkSync, writeSync, type Dirent } from 'node:fs';
import { link as linkFile, mkdir, readdir, readFile, rename, rmdir, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError, errorMessage, hasCode } from '../errors.js';
import {
  KeyedQueue,
  writeWaitingAtClose,
  applyMessagePatch,
  buildFileRef,
  buildMessage,
  buildThread,
  compareThreads,
  copyBytes,
  errnoCode,
  isStoredMessage,
  isThreadRecord,
  isThreadStatus,
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
  normalizeThreadPathForWrite,
  resolveThreadFile,
} from './paths.js';
import { dataFileError, threadFileError, threadStoreError } from './hostErrors.js';
import { acquireThreadLock } from './threadLock.js';
import { Packs, frame, packOf } from './packs.js';
import {
  SECRET_KEY_BYTES,
  decryptSecret,
  encryptSecret,
  isEncryptedValue,
  keySourceOf,
  loadSecretKey,
  type EncryptedValue,
} from './secretKey.js';
import type {
  AppendOptions,
  AttachmentRef,
  FileInfo,
  MessagePatch,
  NewMessage,
  Store,
  StoredMessage,
  ThreadRecord,
  VariableValue,
} from './types.js';

/** Default data directory, relative to the working directory. */
const DEFAULT_STORE_DIR = '.agentport';

/**
 * The group commit's fsync. A test replaces it to hold a commit open while the store goes on
 * (test/store/fileStoreSync.test.ts); nothing else does.
 * @internal
 */
export const groupCommit = { fsync };

/**
 * Appended lines are on disk (fsynced) at most this long after the append returned, by default. One fsync
 * covers every thread of a pack written in the window; a window of 10 ms made the fsyncs a sixth of a call's
 * CPU under load (docs/benchmarks.md), 100 ms makes them negligible.
 */
const DEFAULT_FSYNC_WITHIN_MS = 100;
/** Log descriptors kept open; the least recently used is closed beyond this. */
const MAX_OPEN_FILES = 64;
/** The folder of the packs under the threads folder (packs.ts): no thread may have that id. */
const PACKS_FOLDER = 'packs';
/**
 * What the store keeps in memory: `messageBytes` of parsed messages, all threads together
 * (approximate bytes of their lines), and the records, log states and variables of `threads`
 * threads beyond the ones not yet written. A thread beyond them is read again from its log when
 * next used. Under load, keeping 10,000 threads cost the server up to a fifth more CPU a call than
 * keeping 1,000 (docs/benchmarks.md), while a few hundred conversations at once is a busy server.
 * @internal (tests lower them)
 */
export const CACHE_LIMITS = { messageBytes: 64 * 1024 * 1024, threads: 1000 };

/**
 * Whether a cache kept as a Map in least recently used order has grown enough past its size to be
 * trimmed (down to its size, from the front). Trimming one entry at a time cost more than the
 * entry: V8 leaves a deleted entry as a hole that every later walk from the start steps over until
 * the table is rebuilt, so trimming one entry per new thread from a 10,000-entry cache stepped over
 * thousands of holes each time (about 5 us a call in a loop, far more in a server, where that
 * memory is cold). A tenth over, the holes are stepped over once per tenth.
 */
function overSize(size: number, limit: number): boolean {
  return size > limit + limit / 10;
}

/** Whether one thread's parsed messages may be kept: one over a quarter of the budget is read from its log when needed. */
function cacheable(bytes: number): boolean {
  return bytes <= CACHE_LIMITS.messageBytes / 4;
}

/**
 * Trims a cache kept as a Map in least recently used order once it is {@link overSize}, down to
 * `limit` entries, oldest first. `spared`: keys that stay whatever their age and do not count;
 * `drop` removes one entry (and what goes with it).
 */
function trimOldest<K>(cache: Map<K, unknown>, limit: number, spared: ReadonlySet<K> | undefined, drop: (key: K) => void): void {
  const counted = () => cache.size - (spared?.size ?? 0);
  if (!overSize(counted(), limit)) return;
  for (const key of cache.keys()) {
    if (counted() <= limit) break;
    if (!spared?.has(key)) drop(key);
  }
}

/**
 * Version of the on-disk format, written into each log's first line, files.json and variables.json.
 *
 * 1: a folder per thread with thread.json (the record, replaced atomically on every change) and
 *    messages.jsonl. Creating a thread made three files, each costing as much as hundreds of
 *    appends. Such threads are moved to the log (version 2) when first read; an agentport from
 *    before version 2 refuses the files that say 2, naming the version.
 * 2: the log `<id>.jsonl` holds the record too: one file per thread until it has files or variables.
 * 3: the logs of threads whose id the store generated are kept in packs many threads share
 *    (packs.ts); a thread created with an id of its caller's still has a log of its own. An
 *    agentport of version 2 does not look into packs: it would not see those threads.
 */
export const FILE_STORE_FORMAT_VERSION = 3;

/** Options of {@link FileStore}. */
export interface FileStoreOptions {
  /** Root directory; default {@link DEFAULT_STORE_DIR}. Resolved against the working directory once. */
  dir?: string;
  /**
   * 32-byte key for secret variables. Default: `AGENTPORT_SECRET_KEY`, else `<dir>/secret.key`
   * (generated on first need), loaded only when a secret is first written or read.
   */
  secretKey?: Buffer;
  /**
   * Appended lines are fsynced at most this many milliseconds after the append returned (group commit);
   * default {@link DEFAULT_FSYNC_WITHIN_MS}. 0: as soon as the event loop comes round, still off the reply path.
   */
  fsyncWithinMs?: number;
}

type StoredVariable =
  | { name: string; secret: false; scoped?: boolean; value: string }
  | { name: string; secret: true; scoped?: boolean; encrypted: EncryptedValue };

interface FileIndex {
  version: number;
  files: Record<string, AttachmentRef>;
}

/** Where the next append to a thread's log goes. */
interface AppendState {
  lastSeq: number;
  /** The file ends with a complete record but no newline (cut exactly before it). */
  needsNewline: boolean;
  /** The file's size as this process last left it: another process that appended changed it. */
  bytes: number;
  /** The file ends with part of a line (an interrupted write) from here: cut off before the next append. */
  tornAt?: number;
  /** The file's messages, parsed, while they fit the cache budget. */
  replay?: MessageReplay;
  /** The pack that holds the thread's log (then `bytes` counts its records there), if not a file of its own. */
  pack?: string;
  /** Bytes this state counts toward the cache budget (see FileStore.cache). */
  cached: number;
}

/**
 * A line of the log that changes earlier messages. It never has `seq` or `role`, which
 * every message line has, so the two kinds cannot be confused.
 */
type MessageOp = { op: 'update'; id: string; patch: MessagePatch } | { op: 'delete'; ids: string[] };

/** What a `thread` line sets: the new status and `updatedAt`, and `meta` when it changed (it is replaced whole). */
type ThreadSet = Pick<ThreadRecord, 'status' | 'updatedAt'> & { meta?: Record<string, unknown> };

/** Every kind of operation line. */
type LogOp = MessageOp | { op: 'thread'; set: ThreadSet };

/** A thread's log as read: format 2 lines, from its own file or its pack. */
interface LogBytes {
  bytes: Buffer;
  /** See ParsedLog.size. */
  size: number;
  /** The file it was read from (named in errors). */
  file: string;
  pack?: string;
}

/** A parsed line of the log after its first. */
type LogLine = { message: StoredMessage } | { op: LogOp };

/** A parsed line that concerns messages. */
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

interface ParsedLog {
  /** The thread record: the first line, with every later `thread` line applied. */
  record: ThreadRecord;
  replay: MessageReplay;
  /** Highest seq ever assigned in the file, deleted messages included. */
  lastSeq: number;
  /** Bytes of complete lines; anything after is an unterminated last line. */
  completeBytes: number;
  /** What tells another process's writes: the file's size, or the thread's bytes in its pack. */
  size: number;
  pack?: string;
  /** Kind of the unterminated last line, if any. */
  tail: 'none' | 'record' | 'torn';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

/** Reads a JSON file written by this store in the data folder `dataDir`; `undefined` when it does not exist. */
async function readJson(dataDir: string, file: string): Promise<Record<string, unknown> | undefined> {
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
    throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(file)} is not valid JSON`, err);
  }
  if (!isPlainObject(value)) throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(file)} does not hold a JSON object`);
  checkVersion(value, dataDir, file);
  return value;
}

/** Refuses what has no format version, or one newer than this agentport reads. */
function checkVersion(value: Record<string, unknown>, dataDir: string, file: string): void {
  const version = value.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(file)} has no valid format "version"`);
  }
  if (version > FILE_STORE_FORMAT_VERSION) {
    throw dataFileError(
      'UNSUPPORTED_VERSION',
      dataDir,
      (name) =>
        `${name(file)} has format version ${version}, newer than this agentport supports (${FILE_STORE_FORMAT_VERSION}); upgrade agentport`,
    );
  }
}

/** Persists threads, messages, files and variables as files under one directory. */
export class FileStore implements Store {
  /** Absolute root directory. */
  readonly dir: string;
  private readonly threadsDir: string;
  private readonly givenKey: Buffer | undefined;
  private readonly fsyncWithinMs: number;
  private keyPromise: Promise<Buffer> | undefined;
  // All writes to a thread, and reads that must see them, go through this queue.
  private readonly queue = new KeyedQueue();
  private readonly threads = new Map<string, ThreadRecord>();
  /** Threads loadThread is reading, with how many times a record of theirs was cached meanwhile. */
  private readonly loading = new Map<string, { readers: number; remembered: number }>();
  /** Threads created here that have nothing on disk yet (see materialize). */
  private readonly unwritten = new Set<string>();
  /** Lines of such threads waiting to be written with the first line (AppendOptions.withNextWrite). */
  private readonly waiting = new Map<string, string>();
  private readonly appendState = new Map<string, AppendState>();
  /** The check of each thread lock this store holds (threadLock.ts), made before each write of the thread. */
  private readonly heldLocks = new Map<string, () => void>();
  /** Open log descriptors by thread, least recently used first. */
  private readonly openFiles = new Map<string, number>();
  /** Descriptors written since their last fsync. */
  private readonly dirty = new Set<number>();
  /** Logs with an fsync under way, and how many: one is closed only once they have ended (see closeFile). */
  private readonly syncing = new Map<number, number>();
  /** Logs closed while an fsync of theirs was under way: closed when it ends. */
  private readonly closeWhenSynced = new Set<number>();
  /** The fsyncs under way, which close() waits for. */
  private readonly syncs = new Set<Promise<void>>();
  private fsyncFailed = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private cachedBytes = 0;
  /** Migrations of threads of the first format under way, so that one runs per thread. */
  private readonly migrations = new Map<string, Promise<boolean>>();
  /** Stored variables by thread, with the stamp of variables.json when read or written. */
  private readonly variables = new Map<string, StoredVariable[]>();
  private readonly variableStamps = new Map<string, string | undefined>();
  // Warn once per corrupt line, not on every read of the thread.
  private readonly warned = new Set<string>();
  // Saves a mkdir per thread creation once the threads folder is known to exist.
  private threadsDirReady = false;
  private readonly packs: Packs;

  /**
   * @param options `dir` (default `.agentport`) and an optional `secretKey`.
   * @throws AgentportError `SECRET_KEY_INVALID` when `secretKey` is given but is not 32 bytes.
   */
  constructor(options: FileStoreOptions = {}) {
    this.dir = path.resolve(options.dir ?? DEFAULT_STORE_DIR);
    this.threadsDir = path.join(this.dir, 'threads');
    this.packs = new Packs(path.join(this.threadsDir, PACKS_FOLDER), FILE_STORE_FORMAT_VERSION, this.dir);
    if (options.secretKey !== undefined && (!Buffer.isBuffer(options.secretKey) || options.secretKey.length !== SECRET_KEY_BYTES)) {
      throw new AgentportError('SECRET_KEY_INVALID', `FileStore secretKey must be a Buffer of ${SECRET_KEY_BYTES} bytes`);
    }
    this.givenKey = options.secretKey;
    const within = options.fsyncWithinMs ?? DEFAULT_FSYNC_WITHIN_MS;
    if (!Number.isInteger(within) || within < 0 || within > 2 ** 31 - 1) {
      // Beyond 2^31 - 1 ms, a timer fires after 1 ms.
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `FileStore fsyncWithinMs must be a whole number of milliseconds from 0 to 2147483647, got ${within}`,
      );
    }
    this.fsyncWithinMs = within;
  }

  private threadDir(id: string): string {
    return path.join(this.threadsDir, id);
  }

  /**
   * {@inheritDoc Store.lockThread} A lock file with a heartbeat (threadLock.ts): lost when another process takes it
   * over after the heartbeat went stale, or when the heartbeat cannot be refreshed. A lock file the host's file
   * system refuses is reported without host paths.
   */
  lockThread(threadId: string, waitMs: number, onLost?: (error: AgentportError) => void): Promise<() => Promise<void>> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      const held = await acquireThreadLock(path.join(this.dir, 'locks'), threadId, waitMs, onLost);
      this.heldLocks.set(threadId, held.check);
      const release = () => {
        if (this.heldLocks.get(threadId) === held.check) this.heldLocks.delete(threadId);
        return held();
      };
      // Another process may have written the thread since this one last read it: whatever it wrote
      // (messages, operations, a new status) shows in the size of the log.
      try {
        await this.queue.run(threadId, async () => {
          if (this.variables.has(threadId) && this.variableStamps.get(threadId) !== fileStamp(this.variablesFile(threadId))) {
            this.variables.delete(threadId);
          }
          // A thread locked is about to be known beyond this process: what waits is written now.
          if (this.unwritten.has(threadId)) return this.waiting.has(threadId) ? this.materializeAlone(threadId) : undefined;
          const known = this.appendState.get(threadId);
          if (known === undefined || this.changedOnDisk(threadId, known)) this.forget(threadId);
        });
      } catch (err) {
        // Not held by a caller that never got it.
        await release();
        throw err;
      }
      return release;
    });
  }

  /**
   * Throws THREAD_LOCK_LOST when this process holds the thread's lock and has lost it (or may have: see
   * HeldThreadLock.check), before anything is written: a process resumed after a pause finds out here, at once.
   */
  private checkLock(threadId: string): void {
    this.heldLocks.get(threadId)?.();
  }

  /** Whether another process wrote the thread since this one last read or wrote it: its log's size, or its bytes in its pack. */
  private changedOnDisk(id: string, state: AppendState): boolean {
    if (state.pack === undefined) return fileSize(this.logFile(id)) !== state.bytes;
    return this.packs.changed(state.pack, id, state.bytes, this.openPack(state.pack));
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

  private logFile(id: string): string {
    return path.join(this.threadsDir, `${id}.jsonl`);
  }

  /**
   * The cached record (not a copy), reading the thread's log the first time: its first line and
   * `thread` lines only. Messages are read where a write or read of them needs them, inside the
   * thread's queue, so a read started here can never stand for the file after a later append.
   * `pack`: the thread is known to have no log of its own, and is read from that pack.
   */
  private async loadThread(id: string, pack?: string): Promise<ThreadRecord | undefined> {
    for (;;) {
      const cached = this.threads.get(id);
      if (cached !== undefined) return cached;
      let loading = this.loading.get(id);
      if (loading === undefined) this.loading.set(id, (loading = { readers: 0, remembered: 0 }));
      loading.readers += 1;
      const remembered = loading.remembered;
      let record: ThreadRecord | undefined;
      try {
        const log = await this.logBytes(id, pack);
        record = log === undefined ? undefined : recordOf(log.bytes, this.dir, log.file, id);
      } finally {
        if (--loading.readers === 0) this.loading.delete(id);
      }
      if (record === undefined) return undefined;
      // A write that finished while we were reading is newer: keep it.
      const raced = this.threads.get(id);
      if (raced !== undefined) return raced;
      // One that was also dropped from the cache since (others filled it) is only on disk: read again.
      if (loading.remembered !== remembered) continue;
      this.remember(record);
      return record;
    }
  }

  /** Caches a record; beyond the cache's size the oldest written ones are dropped (they are on disk). */
  private remember(record: ThreadRecord): void {
    const loading = this.loading.get(record.id);
    if (loading !== undefined) loading.remembered += 1;
    this.threads.delete(record.id);
    this.threads.set(record.id, record);
    trimOldest(this.threads, CACHE_LIMITS.threads, this.unwritten, (id) => this.threads.delete(id));
  }

  /**
   * The first line of a thread created here, written with whatever first needs keeping: a thread
   * costs nothing on disk until then. A thread with a log of its own creates it exclusively now;
   * a packed one's pack is opened (or created) by the write. Call inside the thread's queue.
   */
  private materialize(id: string, state: AppendState): string {
    if (!this.unwritten.has(id)) return '';
    const record = this.threads.get(id)!;
    if (state.pack === undefined) this.adoptFile(id, this.createLog(id));
    this.unwritten.delete(id);
    // The waiting lines are dropped once written (writeLine; a failed first write leaves them waiting).
    return headerLine(record) + (this.waiting.get(id) ?? '');
  }

  /** Creates the log of a thread with an id of its caller's, open for appending. */
  private createLog(id: string): number {
    if (!this.threadsDirReady) {
      mkdirSync(this.threadsDir, { recursive: true, mode: 0o700 });
      this.threadsDirReady = true;
    }
    try {
      return openSync(this.logFile(id), 'ax');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') {
        // The threads folder was removed behind our back.
        mkdirSync(this.threadsDir, { recursive: true, mode: 0o700 });
        return openSync(this.logFile(id), 'ax');
      }
      if (errnoCode(err) === 'EEXIST' && isAbandonedCreation(this.logFile(id))) {
        // What an interrupted creation leaves (nothing, or part of the first line) is no thread: start it over.
        closeSync(openSync(this.logFile(id), 'w'));
        return openSync(this.logFile(id), 'a');
      }
      if (errnoCode(err) === 'EEXIST') throw new AgentportError('THREAD_EXISTS', `Thread ${id} already exists`);
      throw err;
    }
  }

  /** Writes a thread created here to disk on its own (before what is kept beside its log: files and variables). */
  private async materializeAlone(id: string): Promise<void> {
    if (!this.unwritten.has(id)) return;
    const state = await this.appendStateFor(id);
    this.writeLine(id, state, this.materialize(id, state), true);
  }

  private async requireThread(id: string): Promise<ThreadRecord> {
    const record = await this.loadThread(id);
    if (record === undefined) throw threadNotFound(id);
    return record;
  }

  /** {@inheritDoc Store.createThread} */
  async createThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): Promise<ThreadRecord> {
    // A generated id names the pack the thread's log goes to; a given one gets a log of its own.
    const generated = init.id === undefined && isPlainObject(init);
    if (init.id === PACKS_FOLDER) {
      // Its folder (files, variables) would be the packs' folder.
      throw new AgentportError('INVALID_THREAD_ID', `Invalid thread id "${PACKS_FOLDER}": the file store keeps its packs under that name`);
    }
    const record = buildThread(generated ? { ...init, id: this.packs.newThreadId() } : init);
    return this.queue.run(record.id, async () => {
      // A given id may name a thread on disk already; a generated one is new. Nothing is written yet.
      if (this.threads.has(record.id) || (!generated && (await this.loadThread(record.id)) !== undefined)) {
        throw new AgentportError('THREAD_EXISTS', `Thread ${record.id} already exists`);
      }
      this.unwritten.add(record.id);
      this.remember(record);
      // A new thread has no messages: nothing to read on the first append.
      this.fresh(record.id, generated ? packOf(record.id) : undefined);
      return jsonCopy(record, 'thread');
    });
  }

  /** Runs a thread operation; a failure of the host's file system is reported without host paths (hostErrors.ts). */
  private guarded<T>(threadId: string, operation: () => Promise<T>): Promise<T> {
    return operation().catch((error: unknown) => {
      throw threadStoreError(error, threadId);
    });
  }

  /** {@inheritDoc Store.getThread} */
  getThread(id: string): Promise<ThreadRecord | undefined> {
    return this.guarded(id, async () => {
      if (!isValidThreadId(id)) return undefined;
      const record = await this.loadThread(id);
      return record === undefined ? undefined : jsonCopy(record, 'thread');
    });
  }

  /** {@inheritDoc Store.updateThread} Appends a `thread` record to the log (a new thread's first line holds it). */
  updateThread(id: string, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): Promise<ThreadRecord> {
    return this.guarded(id, async () => {
      assertValidThreadId(id);
      return this.queue.run(id, async () => {
        const next = patchThread(await this.requireThread(id), patch);
        if (this.unwritten.has(id)) {
          // The first line holds the record as it is now.
          this.threads.set(id, next);
          await this.materializeAlone(id);
        } else {
          const set: ThreadSet = { status: next.status, updatedAt: next.updatedAt };
          if (patch.meta !== undefined) set.meta = next.meta;
          this.appendLine(id, await this.appendStateFor(id), { op: 'thread', set });
        }
        this.remember(next);
        return jsonCopy(next, 'thread');
      });
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
    const ids = new Set<string>();
    for (const e of entries) {
      if (e.isFile() && e.name.endsWith('.jsonl')) ids.add(e.name.slice(0, -'.jsonl'.length));
      // A folder is a thread's files and variables, or a thread of the first format (read, and so migrated).
      else if (e.isDirectory() && e.name !== PACKS_FOLDER) ids.add(e.name);
    }
    // Threads of packs: their ids from the packs' indexes, each read by its records unless cached (a log of its own wins).
    const packed: ThreadRecord[] = [];
    for (const pack of await this.packNames()) {
      let packIds: string[];
      try {
        packIds = this.packs.threadIds(pack, this.openPack(pack));
      } catch (err) {
        passedOver(`the threads of ${this.packs.file(pack)}`, err);
        continue;
      }
      for (const id of packIds) {
        if (ids.has(id)) continue;
        try {
          const record = await this.loadThread(id, pack);
          if (record !== undefined) packed.push(record);
        } catch (err) {
          passedOver(`thread ${id}`, err);
        }
      }
    }
    const records = await Promise.all(
      [...ids]
        .filter((id) => isValidThreadId(id))
        .map(async (id) => {
          try {
            return await this.loadThread(id);
          } catch (err) {
            passedOver(`thread ${id}`, err);
            return undefined;
          }
        }),
    );
    // Threads created here with nothing written yet are threads too.
    const listed = new Set([...records, ...packed].map((r) => r?.id));
    const pending = [...this.unwritten].filter((id) => !listed.has(id)).map((id) => this.threads.get(id));
    return [...records, ...packed, ...pending]
      .filter((r): r is ThreadRecord => r !== undefined)
      .map((r) => jsonCopy(r, 'thread'))
      .sort(compareThreads);
  }

  /** The packs in the threads folder. */
  private async packNames(): Promise<string[]> {
    try {
      return (await readdir(this.packs.dir)).filter((name) => /^[0-9a-f]{8}\.jsonl$/.test(name)).map((name) => name.slice(0, 8));
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
      return [];
    }
  }

  // ---- the log: the thread record, its messages and what changed them ---------------------

  /**
   * Reads and replays a thread's log; `undefined` when the thread does not exist (no log, or
   * only what an interrupted creation leaves). A thread of the first format is migrated first.
   * An unterminated last line is what a process killed mid-append leaves: it is dropped silently
   * (no append, update or delete ever reported it written). A bad line in the middle means the
   * file was damaged otherwise: it is skipped with a warning so the rest of the conversation
   * survives.
   */
  private async readLog(id: string): Promise<ParsedLog | undefined> {
    const log = await this.logBytes(id);
    if (log === undefined) return undefined;
    const { bytes: buf, file } = log;
    const header = headerOf(buf, this.dir, file, id);
    if (!header) return undefined;
    const headerEnd = header.end;
    let record = header.record;
    const completeBytes = buf.lastIndexOf(0x0a) + 1;
    const replay = new MessageReplay();
    const take = (line: LogLine) => {
      if ('op' in line && isThreadOp(line.op)) record = { ...record, ...line.op.set };
      else replay.add(line as MessageLine);
    };
    const lines = buf
      .subarray(headerEnd + 1, completeBytes)
      .toString('utf8')
      .split('\n');
    lines.pop(); // the empty string after the final newline
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const parsed = parseLine(line);
      if (parsed === undefined) {
        const key = `${file}:${id}:${i + 2}`;
        if (!this.warned.has(key)) {
          this.warned.add(key);
          warn(`skipping corrupt line ${i + 2} of ${log.pack === undefined ? file : `thread ${id} in ${file}`}`);
        }
        return;
      }
      take(parsed);
    });
    let tail: ParsedLog['tail'] = 'none';
    if (completeBytes < buf.length) {
      const last = parseLine(buf.subarray(completeBytes).toString('utf8'));
      if (last === undefined) {
        tail = 'torn';
      } else {
        // Cut exactly before its newline: the record itself is whole.
        tail = 'record';
        take(last);
      }
    }
    return { record, replay, lastSeq: replay.lastSeq, completeBytes, size: log.size, tail, ...(log.pack ? { pack: log.pack } : {}) };
  }

  /**
   * The log's bytes: its own file (a thread of the first format migrated to one first), else what
   * its pack holds of it; `undefined` when there is neither. A thread `known` to be in a pack is
   * read from it at once.
   */
  private async logBytes(id: string, known = this.appendState.get(id)?.pack): Promise<LogBytes | undefined> {
    if (known === undefined) {
      const file = this.logFile(id);
      let own = await readOwnLog(file);
      if (own === undefined) {
        // Migrated here, by another process just now, or no thread of the first format at all.
        await this.migrate(id);
        own = await readOwnLog(file);
      }
      if (own !== undefined) return { bytes: own, size: own.length, file };
    }
    const pack = known ?? packOf(id);
    const packed = pack === undefined ? undefined : this.packs.read(pack, id, this.openPack(pack));
    return packed && { ...packed, file: this.packs.file(pack!), pack: pack! };
  }

  /** Keeps what a read of the log found as the thread's append state (inside the thread's queue). */
  private adopt(id: string, log: ParsedLog): AppendState {
    this.dropCached(this.appendState.get(id));
    const state: AppendState = { lastSeq: log.lastSeq, needsNewline: log.tail === 'record', bytes: log.size, cached: 0 };
    if (log.pack !== undefined) state.pack = log.pack;
    if (log.tail === 'torn') state.tornAt = log.completeBytes;
    this.appendState.set(id, state);
    this.cache(id, state, log.replay, log.size);
    this.trimStates();
    return state;
  }

  /** A new thread's state: nothing on disk to read. */
  private fresh(id: string, pack?: string): AppendState {
    const state: AppendState = { lastSeq: 0, needsNewline: false, bytes: 0, replay: new MessageReplay(), cached: 0 };
    if (pack !== undefined) state.pack = pack;
    this.appendState.set(id, state);
    this.trimStates();
    return state;
  }

  /** Keeps the states of about `CACHE_LIMITS.threads` written threads (any is read again from its log). */
  private trimStates(): void {
    trimOldest(this.appendState, CACHE_LIMITS.threads, this.unwritten, (id) => {
      this.dropCached(this.appendState.get(id));
      this.appendState.delete(id);
    });
  }

  /** Stops counting a state's parsed messages toward the budget, dropping them. */
  private dropCached(state: AppendState | undefined): void {
    if (state === undefined) return;
    this.cachedBytes -= state.cached;
    state.cached = 0;
    state.replay = undefined;
  }

  /**
   * Moves a thread of the first format (`<id>/thread.json` and `<id>/messages.jsonl`) to a log:
   * written whole to a temporary file, linked into place (never over a log another process moved
   * first, and may have appended to since), then the old files removed. A crash in between leaves
   * the old files, or the log (which wins) beside leftovers. Returns false when there is no such
   * thread (or another process moved it just now).
   */
  private migrate(id: string): Promise<boolean> {
    let pending = this.migrations.get(id);
    if (pending === undefined) {
      pending = migrateThread(this.dir, this.threadDir(id), this.logFile(id), id).finally(() => this.migrations.delete(id));
      this.migrations.set(id, pending);
    }
    return pending;
  }

  /** Where the next append goes, repairing a torn last line first (inside the thread's queue). */
  /** The append state when nothing needs reading or repairing first (see appendStateFor). */
  private readyAppendState(id: string): AppendState | undefined {
    const state = this.appendState.get(id);
    return state !== undefined && state.tornAt === undefined ? state : undefined;
  }

  private async appendStateFor(id: string): Promise<AppendState> {
    let state = this.appendState.get(id);
    if (state === undefined && this.unwritten.has(id)) state = this.fresh(id);
    if (state === undefined) {
      const log = await this.readLog(id);
      if (log === undefined) throw threadNotFound(id);
      state = this.adopt(id, log);
    }
    if (state.tornAt !== undefined) {
      // Appending after the fragment would glue the next record onto it: cut it off.
      await truncate(this.logFile(id), state.tornAt);
      warn(`dropped an incomplete last line of ${this.logFile(id)} (an interrupted write)`);
      state.bytes = state.tornAt;
      delete state.tornAt;
    }
    return state;
  }

  /** Keeps a thread's parsed messages while the budget allows, dropping the least recently used. */
  private cache(id: string, state: AppendState, replay: MessageReplay, bytes: number): void {
    if (!cacheable(bytes)) return;
    state.replay = replay;
    state.cached = bytes;
    this.cachedBytes += bytes;
    // Most recently used last.
    this.appendState.delete(id);
    this.appendState.set(id, state);
    this.trimMessages(id);
  }

  /** Drops the least recently used threads' parsed messages, down to the budget, once they are a tenth over it (`id`'s stay). */
  private trimMessages(id: string): void {
    if (!overSize(this.cachedBytes, CACHE_LIMITS.messageBytes)) return;
    for (const [other, known] of this.appendState) {
      if (this.cachedBytes <= CACHE_LIMITS.messageBytes) break;
      // A thread created here has nothing on disk to read its messages back from.
      if (other === id || !known.replay || this.unwritten.has(other)) continue;
      this.dropCached(known);
    }
  }

  /** Forgets what is known of a thread's log (another process wrote it, or a write failed). */
  private forget(id: string): void {
    this.dropCached(this.appendState.get(id));
    this.appendState.delete(id);
    this.threads.delete(id);
    this.closeFile(id);
  }

  /** The thread's messages, from the cache when it holds them. Call inside the thread's queue. */
  private async currentMessages(id: string): Promise<StoredMessage[]> {
    const state = this.appendState.get(id);
    if (state?.replay) {
      this.appendState.delete(id);
      this.appendState.set(id, state);
      return jsonCopy(state.replay.messages(), 'messages');
    }
    if (this.unwritten.has(id)) return [];
    const log = await this.readLog(id);
    if (log === undefined) throw threadNotFound(id);
    // Kept for the next read, unless the file is not as this process last left it (the next lock check decides).
    if (state === undefined) this.adopt(id, log);
    else if (state.bytes === log.size) this.cache(id, state, log.replay, log.size);
    return log.replay.messages();
  }

  /** The open descriptor kept under `key`, made the most recently used; undefined when there is none. */
  private openFile(key: string): number | undefined {
    const fd = this.openFiles.get(key);
    if (fd === undefined) return undefined;
    this.openFiles.delete(key);
    this.openFiles.set(key, fd);
    return fd;
  }

  private fileFor(threadId: string): number {
    let fd = this.openFile(threadId);
    if (fd === undefined) {
      fd = openSync(this.logFile(threadId), 'a');
      this.adoptFile(threadId, fd);
    }
    return fd;
  }

  /** A pack's descriptor when it is open here (for reading too), else undefined; see packFile. */
  private openPack(pack: string): number | undefined {
    return this.openFiles.get(packKey(pack));
  }

  /** A pack's descriptor, kept among the open logs under a key no thread id can be. */
  private packFile(pack: string): number {
    const key = packKey(pack);
    let fd = this.openFile(key);
    if (fd !== undefined) return fd;
    try {
      fd = this.packs.open(pack);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
      mkdirSync(this.packs.dir, { recursive: true, mode: 0o700 });
      fd = this.packs.open(pack);
    }
    this.adoptFile(key, fd);
    return fd;
  }

  private adoptFile(threadId: string, fd: number): void {
    this.openFiles.set(threadId, fd);
    for (const [other] of this.openFiles) {
      if (this.openFiles.size <= MAX_OPEN_FILES) break;
      this.closeFile(other);
    }
  }

  private closeFile(threadId: string): void {
    const fd = this.openFiles.get(threadId);
    if (fd === undefined) return;
    this.openFiles.delete(threadId);
    // Written since the last group commit: synced before it is closed (off the caller's path).
    if (this.dirty.delete(fd)) void this.sync(fd);
    // A descriptor closed under an fsync would leave its writes unsynced (or another file's synced in its place).
    if (this.syncing.has(fd)) this.closeWhenSynced.add(fd);
    else closeSync(fd);
  }

  /** One fsync in the thread pool; a log closed meanwhile is closed once its last fsync has ended. */
  private sync(fd: number): Promise<void> {
    this.syncing.set(fd, (this.syncing.get(fd) ?? 0) + 1);
    const done = new Promise<void>((resolve) =>
      groupCommit.fsync(fd, (error) => {
        // Said once: a disk that fails fsyncs fails them all, and the lines are still in the file.
        if (error && !this.fsyncFailed) {
          this.fsyncFailed = true;
          warn(
            `fsync of a thread log under ${this.threadsDir} failed (${error.code ?? error.message}): what was appended may not survive a power loss`,
          );
        }
        resolve();
      }),
    ).then(() => {
      this.syncs.delete(done);
      const left = this.syncing.get(fd)! - 1;
      if (left > 0) return void this.syncing.set(fd, left);
      this.syncing.delete(fd);
      if (!this.closeWhenSynced.delete(fd)) return;
      try {
        closeSync(fd);
      } catch {
        // Nothing is lost: what was written is in the file whether or not its descriptor closes.
      }
    });
    this.syncs.add(done);
    return done;
  }

  /** Group commit: everything written in the window is fsynced together, once. */
  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushing = this.flush();
    }, this.fsyncWithinMs);
    this.flushTimer.unref();
  }

  private flush(): Promise<void> {
    const fds = [...this.dirty];
    this.dirty.clear();
    return Promise.all(fds.map((fd) => this.sync(fd))).then(() => undefined);
  }

  /**
   * One write of whole lines (format 2, each ending with a newline) to the thread's log or pack.
   * `creating`: the lines start with the thread's first line, and a failed write leaves the
   * thread as created (nothing on disk; a new log of its own is taken back).
   */
  private writeLine(threadId: string, state: AppendState, lines: string, creating = false): void {
    this.checkLock(threadId);
    const pack = state.pack;
    const data = Buffer.from(pack === undefined ? lines : frame(threadId, lines), 'utf8');
    try {
      let fd: number;
      if (pack === undefined) {
        fd = this.fileFor(threadId);
        let written = 0;
        while (written < data.length) written += writeSync(fd, data, written);
      } else {
        fd = this.packFile(pack);
        this.packs.append(fd, pack, data);
      }
      // The first line went with what waited for it (see materialize).
      if (creating) this.waiting.delete(threadId);
      this.dirty.add(fd);
      this.scheduleFlush();
    } catch (err) {
      if (creating && pack !== undefined && this.wholeDespiteFailure(pack, threadId)) {
        // Whole on disk, but for its newline: written. (Tried again, it would start the thread's log over.)
        this.waiting.delete(threadId);
        this.forget(threadId);
        return;
      }
      if (creating) {
        // The thread stays as created (what waits still waits), whether or not its new file goes.
        this.unwritten.add(threadId);
        // Part of a pack's record is a fragment every reader skips, and a whole one is read as a try
        // the next one replaces (packs.ts); a log of its own is removed.
        if (pack === undefined) {
          try {
            this.closeFile(threadId);
            unlinkSync(this.logFile(threadId));
          } catch {
            // A log left behind without its first line is no thread to any reader (see isAbandonedCreation).
          }
        }
      } else {
        // Part of the line may be on disk: re-read (and repair) before the next append.
        this.forget(threadId);
      }
      throw err;
    }
    state.bytes += data.length;
    if (state.replay) {
      state.cached += data.length;
      this.cachedBytes += data.length;
      // A thread that outgrows its share is read from its log when needed, as one that had it at first.
      if (!cacheable(state.cached)) this.dropCached(state);
      else this.trimMessages(threadId);
    }
  }

  /** Whether a thread's first record, whose write failed, is whole in its pack all the same (see packs.ts). */
  private wholeDespiteFailure(pack: string, threadId: string): boolean {
    try {
      return this.packs.holds(pack, threadId, this.openPack(pack));
    } catch {
      return false;
    }
  }

  /** Appends one record to the log (a new thread's first line with it); call inside the thread's queue. */
  private appendLine(threadId: string, state: AppendState, record: StoredMessage | LogOp): void {
    const header = this.materialize(threadId, state);
    const line = header + (state.needsNewline ? '\n' : '') + JSON.stringify(record) + '\n';
    this.writeLine(threadId, state, line, header !== '');
    state.needsNewline = false;
    // The cache keeps its own copy: the caller may change what it was given.
    if (state.replay && !isThreadOp(record)) {
      state.replay.add('seq' in record ? { message: jsonCopy(record, 'message') } : { op: jsonCopy(record, 'record') });
    }
  }

  /** {@inheritDoc Store.appendMessage} */
  appendMessage(threadId: string, message: NewMessage, options?: AppendOptions): Promise<StoredMessage> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      // Validate and copy now: the caller may reuse its object while the append waits its turn.
      const draft = buildMessage(threadId, 0, message);
      return this.queue.run(threadId, async () => {
        // A run's appends find their thread known and its state ready: no turn of the event loop for either.
        if (!this.threads.has(threadId)) await this.requireThread(threadId);
        const state = this.readyAppendState(threadId) ?? (await this.appendStateFor(threadId));
        // lastSeq counts deleted messages too (their lines stay in the file): no seq is reused.
        const stored: StoredMessage = { ...draft, seq: state.lastSeq + 1 };
        if (options?.withNextWrite && this.unwritten.has(threadId)) {
          // Written with the thread's first line, by whatever writes the thread next (or by close).
          this.waiting.set(threadId, (this.waiting.get(threadId) ?? '') + JSON.stringify(stored) + '\n');
          state.replay?.add({ message: jsonCopy(stored, 'message') });
          state.lastSeq = stored.seq;
          return stored;
        }
        this.appendLine(threadId, state, stored);
        state.lastSeq = stored.seq;
        return stored;
      });
    });
  }

  /** {@inheritDoc Store.updateMessage} Appends an `update` record to the log. */
  updateMessage(threadId: string, id: string, patch: MessagePatch): Promise<StoredMessage> {
    return this.guarded(threadId, async () => {
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
        if (Object.keys(checked).length > 0) this.appendLine(threadId, state, { op: 'update', id, patch: checked });
        return applyMessagePatch(current, checked);
      });
    });
  }

  /** {@inheritDoc Store.deleteMessages} Appends a `delete` record to the log. */
  deleteMessages(threadId: string, ids: readonly string[]): Promise<void> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      const unique = validateMessageIds(threadId, ids);
      await this.queue.run(threadId, async () => {
        await this.requireThread(threadId);
        if (unique.length === 0) return;
        // No need to check which ids exist: replaying the record skips unknown ones, and it never
        // touches a message appended after it, even one that reuses a deleted id.
        this.appendLine(threadId, await this.appendStateFor(threadId), { op: 'delete', ids: unique });
      });
    });
  }

  /** {@inheritDoc Store.listMessages} */
  listMessages(threadId: string): Promise<StoredMessage[]> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      return this.queue.run(threadId, async () => {
        await this.requireThread(threadId);
        return this.currentMessages(threadId);
      });
    });
  }

  // ---- files ---------------------------------------------------------------------------

  private indexFile(id: string): string {
    return path.join(this.threadDir(id), 'files.json');
  }

  private async readIndex(id: string): Promise<FileIndex> {
    const file = this.indexFile(id);
    const value = await readJson(this.dir, file);
    if (value === undefined) return { version: FILE_STORE_FORMAT_VERSION, files: {} };
    if (!isPlainObject(value.files)) throw dataFileError('CORRUPT_DATA', this.dir, (name) => `${name(file)} has no "files" object`);
    return { version: FILE_STORE_FORMAT_VERSION, files: value.files as Record<string, AttachmentRef> };
  }

  /** {@inheritDoc Store.writeFile} */
  async writeFile(threadId: string, filePath: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPathForWrite(filePath);
    const ref = buildFileRef(threadPath, data, info);
    const bytes = copyBytes(data); // the caller may reuse its buffer while we wait our turn
    return this.queue
      .run(threadId, async () => {
        await this.requireThread(threadId);
        await this.materializeAlone(threadId);
        this.checkLock(threadId);
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
      })
      .catch((error: unknown) => {
        throw threadFileError(error, 'write', threadId, threadPath);
      });
  }

  /** {@inheritDoc Store.readFile} Only files written through the store (listed in files.json) are found. */
  async readFile(threadId: string, filePath: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(filePath);
    return this.queue
      .run(threadId, async () => {
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
      })
      .catch((error: unknown) => {
        throw threadFileError(error, 'read', threadId, threadPath);
      });
  }

  /** {@inheritDoc Store.listFiles} */
  listFiles(threadId: string, prefix?: string): Promise<AttachmentRef[]> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      const dir = directoryPrefix(prefix);
      return this.queue.run(threadId, async () => {
        await this.requireThread(threadId);
        return Object.values((await this.readIndex(threadId)).files)
          .filter((ref) => matchesPrefix(ref.path, dir))
          .map((ref) => ({ ...ref }))
          .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      });
    });
  }

  /** {@inheritDoc Store.deleteFile} Only files written through the store (listed in files.json) are found. */
  async deleteFile(threadId: string, filePath: string): Promise<boolean> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(filePath);
    return this.queue
      .run(threadId, async () => {
        await this.requireThread(threadId);
        this.checkLock(threadId);
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
      })
      .catch((error: unknown) => {
        throw threadFileError(error, 'delete', threadId, threadPath);
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
    const value = await readJson(this.dir, file);
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
    if (!valid) throw dataFileError('CORRUPT_DATA', this.dir, (name) => `${name(file)} does not hold a valid "variables" list`);
    this.rememberVariables(id, list as StoredVariable[], stamp);
    return list as StoredVariable[];
  }

  /** Keeps a thread's stored variables (ciphertexts as stored) with the stamp of their file. */
  private rememberVariables(id: string, list: StoredVariable[], stamp: string | undefined): void {
    this.variables.delete(id);
    this.variables.set(id, list);
    this.variableStamps.set(id, stamp);
    trimOldest(this.variables, CACHE_LIMITS.threads, undefined, (other) => {
      this.variables.delete(other);
      this.variableStamps.delete(other);
    });
  }

  /** Binds a ciphertext to its thread and name, so it cannot be moved to another variable. */
  private static aad(threadId: string, name: string): string {
    return `agentport/variable/v1/${threadId}/${name}`;
  }

  /** {@inheritDoc Store.setVariables} Secret values are encrypted before they reach the disk. */
  setVariables(threadId: string, values: VariableValue[]): Promise<void> {
    return this.guarded(threadId, async () => {
      assertValidThreadId(threadId);
      const incoming = validateVariables(threadId, values);
      await this.queue.run(threadId, async () => {
        await this.requireThread(threadId);
        await this.materializeAlone(threadId);
        this.checkLock(threadId);
        const existing = await this.readVariables(threadId);
        const key = incoming.some((v) => v.secret) ? await this.key() : undefined;
        const stored = incoming.map((v): StoredVariable => {
          const base = v.scoped === undefined ? { name: v.name } : { name: v.name, scoped: v.scoped };
          if (!v.secret) return { ...base, secret: false, value: v.value };
          // `key` is set whenever a secret is present (see above).
          return { ...base, secret: true, encrypted: encryptSecret(key as Buffer, v.value, FileStore.aad(threadId, v.name)) };
        });
        const merged = mergeByName(existing, stored);
        await mkdir(this.threadDir(threadId), { recursive: true });
        await writeJsonAtomic(this.variablesFile(threadId), { version: FILE_STORE_FORMAT_VERSION, variables: merged });
        this.rememberVariables(threadId, merged, fileStamp(this.variablesFile(threadId)));
      });
    });
  }

  /** {@inheritDoc Store.getVariables} */
  getVariables(threadId: string): Promise<VariableValue[]> {
    return this.guarded(threadId, async () => {
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
                `Cannot decrypt secret variable "${v.name}" of thread ${threadId}: the key (${keySourceOf(this.givenKey !== undefined)}) differs from the one it was stored with, or the file was altered`,
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
    });
  }

  /** {@inheritDoc Store.close} */
  async close(): Promise<void> {
    await this.queue.idle();
    await writeWaitingAtClose(this.queue, this.waiting.keys(), (threadId) => this.materializeAlone(threadId));
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushing;
    await this.flush();
    for (const threadId of [...this.openFiles.keys()]) this.closeFile(threadId);
    // What eviction synced before closing, still under way.
    await Promise.all([...this.syncs]);
  }
}

/** The key of a pack's descriptor among the open logs: `@` starts no thread id. */
function packKey(pack: string): string {
  return `@${pack}`;
}

/** A log file's bytes; `undefined` when there is no such file. */
async function readOwnLog(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
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

function isThreadSet(value: unknown): value is ThreadSet {
  return (
    isPlainObject(value) &&
    typeof value.updatedAt === 'string' &&
    isThreadStatus(value.status) &&
    (value.meta === undefined || isPlainObject(value.meta))
  );
}

function isLogOp(value: unknown): value is LogOp {
  if (!isPlainObject(value) || 'seq' in value || 'role' in value) return false;
  if (value.op === 'update') return typeof value.id === 'string' && isPlainObject(value.patch);
  if (value.op === 'delete') return Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'string');
  if (value.op === 'thread') return isThreadSet(value.set);
  return false;
}

/** A line of the log (after the first) as a message or an operation; `undefined` when it is neither. */
function parseLine(line: string): LogLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (isStoredMessage(value)) return { message: value };
  if (isLogOp(value)) return { op: value };
  return undefined;
}

/** The thread record of a log's first line, whose `version` is checked like every file's. */
function parseHeader(line: string, dataDir: string, file: string): ThreadRecord {
  const invalid = (cause?: unknown) =>
    dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(file)} does not start with a valid thread record`, cause);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw invalid(err);
  }
  if (!isPlainObject(value)) throw invalid();
  checkVersion(value, dataDir, file);
  if (!isThreadRecord(value.thread)) throw invalid();
  return value.thread;
}

/** How long a log may lack its first line before it counts as what an interrupted creation left. */
const ABANDONED_AFTER_MS = 10_000;

/**
 * Whether a log is what an interrupted creation left: no whole first line, and untouched for
 * {@link ABANDONED_AFTER_MS} (another process's creation may be under way: its first line follows
 * the file's creation at once).
 */
function isAbandonedCreation(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const read = readSync(fd, head, 0, head.length, 0);
    return !head.subarray(0, read).includes(0x0a) && Date.now() - fstatSync(fd).mtimeMs > ABANDONED_AFTER_MS;
  } finally {
    closeSync(fd);
  }
}

function isThreadOp(value: StoredMessage | LogOp): value is Extract<LogOp, { op: 'thread' }> {
  return 'op' in value && value.op === 'thread' && !('seq' in value);
}

/** A log's first line: the thread record as created, and where the line ends; `undefined` before it is whole. */
function headerOf(buf: Buffer, dataDir: string, file: string, id: string): { record: ThreadRecord; end: number } | undefined {
  const end = buf.indexOf(0x0a);
  if (end < 0) return undefined;
  const record = parseHeader(buf.subarray(0, end).toString('utf8'), dataDir, file);
  if (record.id !== id)
    throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(file)} does not hold a valid record for thread ${id}`);
  return { record, end };
}

/** A log's first line for `record`. */
function headerLine(record: ThreadRecord): string {
  return JSON.stringify({ version: FILE_STORE_FORMAT_VERSION, thread: record }) + '\n';
}

/** The record a log holds: its first line with every `thread` line applied (the only lines parsed). */
function recordOf(buf: Buffer, dataDir: string, file: string, id: string): ThreadRecord | undefined {
  const header = headerOf(buf, dataDir, file, id);
  if (header === undefined) return undefined;
  const headerEnd = header.end;
  let record = header.record;
  // JSON.stringify writes `op` first: a thread line starts so, and no message line does (they start with "id").
  const marker = Buffer.from('\n{"op":"thread"');
  for (let at = buf.indexOf(marker, headerEnd); at >= 0; at = buf.indexOf(marker, at + 1)) {
    // The last line may lack its newline (whole, or torn: then it does not parse).
    const end = buf.indexOf(0x0a, at + 1);
    const line = parseLine(buf.subarray(at + 1, end < 0 ? buf.length : end).toString('utf8'));
    if (line && 'op' in line && isThreadOp(line.op)) record = { ...record, ...line.op.set };
  }
  return record;
}

/** Whether a file is there (a missing file or folder on the way is "no"; anything else is thrown). */
async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (err: unknown) => {
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return false;
      throw err;
    },
  );
}

/** For removals another process may have done first. */
function ignoreMissing(err: unknown): void {
  if (errnoCode(err) !== 'ENOENT') throw err;
}

/** See FileStore.migrate. */
async function migrateThread(dataDir: string, folder: string, logFile: string, id: string): Promise<boolean> {
  const recordFile = path.join(folder, 'thread.json');
  const messagesFile = path.join(folder, 'messages.jsonl');
  const value = await readJson(dataDir, recordFile);
  if (value === undefined) {
    // Its messages without its record: the record was written first and is removed last, so this is damage.
    if (await exists(messagesFile)) {
      throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(messagesFile)} has no ${name(recordFile)} beside it`);
    }
    return false;
  }
  const { version: _version, ...record } = value;
  if (!isThreadRecord(record) || record.id !== id) {
    throw dataFileError('CORRUPT_DATA', dataDir, (name) => `${name(recordFile)} does not hold a valid record for thread ${id}`);
  }
  let lines = await readFile(messagesFile).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return Buffer.alloc(0);
    throw err;
  });
  // A torn last line is dropped (it was never reported written); a whole record cut before its newline gets one.
  const complete = lines.lastIndexOf(0x0a) + 1;
  if (complete < lines.length) {
    const last = lines.subarray(complete);
    lines = Buffer.concat([
      lines.subarray(0, complete),
      parseLine(last.toString('utf8')) ? Buffer.concat([last, Buffer.from('\n')]) : Buffer.alloc(0),
    ]);
  }
  const header = headerLine(record);
  const tmp = path.join(path.dirname(logFile), `.agentport-tmp-${randomUUID()}`);
  try {
    await writeFile(tmp, Buffer.concat([Buffer.from(header, 'utf8'), lines]), { flush: true });
    // A link, not a rename: another process may have moved the thread first and appended to its log since.
    await linkFile(tmp, logFile).catch((err: unknown) => {
      if (errnoCode(err) !== 'EEXIST') throw err;
    });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await unlink(messagesFile).catch(ignoreMissing);
  await unlink(recordFile).catch(ignoreMissing);
  // The folder stays when the thread has files or variables.
  await rmdir(folder).catch(() => undefined);
  return true;
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

/**
 * What listThreads passes over, said on stderr once: a damaged or newer file's error was said when it was
 * made, with the file's full path (hostErrors.ts, dataFileError).
 */
function passedOver(what: string, err: unknown): void {
  if (hasCode(err, 'CORRUPT_DATA') || hasCode(err, 'UNSUPPORTED_VERSION')) return;
  warn(`skipping ${what}: ${errorMessage(err)}`);
}
