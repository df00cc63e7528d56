/**
 * Packs: logs that many threads share (the file store's format 3).
 *
 * Creating a file is what a new thread cost the file store: the file system's work for a new
 * file (and its writeback) came to about as much CPU as the rest of a one-step call. A thread
 * whose id the store generates therefore keeps its log in a pack, `threads/packs/<pack>.jsonl`,
 * which the threads created after it share until the pack is full ({@link PACK_LIMITS}); the
 * pack's name is the first group of the thread's id, so a reader finds it without an index.
 *
 * A record is what one write appends: `\n<thread id> <lines>\x1e\n`, where `<lines>` are lines of
 * the thread's log exactly as in format 2 (its first line the thread record, then messages and
 * operations), joined by `\x1f`. JSON never has those two bytes raw, so a record is whole exactly
 * when it ends with `\x1e`: what an interrupted write leaves (a fragment) does not, and is skipped,
 * all of it; the next record's leading newline keeps it from running into that one. A whole record
 * still waiting for its newline is whole. Appends from several processes do not mix (each is one
 * write to a file opened for appending). The first record is `- {"version":3}`.
 *
 * A write is one system call: a short one is not continued (the rest could land after another
 * process's record) but fails. One that failed with only its newline missing is whole, and the
 * store counts it written (FileStore.wholeDespiteFailure). Should a thread's first record be written
 * twice all the same, its log starts at the last record that starts with a thread record.
 *
 * A reader scans a pack once and then only what was appended since (see {@link PackIndex}): which
 * byte ranges hold each thread's records, and how many bytes each thread has in it, which is how
 * a change by another process is noticed (like a format 2 log's size).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { close, closeSync, fstatSync, fsync, open as openFile, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AgentportError } from '../errors.js';
import { dataFileError } from './hostErrors.js';
import { errnoCode } from './internal.js';

/**
 * When the pack new threads go to is full (`threads`, `bytes`): a new one is started. `indexedRecords`:
 * records whose place the indexes keep, all packs together; beyond, the least recently used pack's
 * index keeps only each thread's byte count (enough to tell a change) and is scanned again from its
 * start when one of its threads is read. @internal (tests lower them)
 */
export const PACK_LIMITS = { threads: 1000, bytes: 8 * 1024 * 1024, indexedRecords: 1_000_000 };

/** The pack's own first record, written with its creation. */
const PACK_MARKER = '-';
/** Between the log lines of one record. */
const LINE_SEPARATOR = '\x1f';
/** The last byte of a whole record. */
const RECORD_END = 0x1e;

/** A generated thread id: a UUID whose first group (8 hex digits) names its pack. */
const PACKED_ID = /^([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Packs with an index (whole or counts only); beyond, the least recently used one's is dropped. */
const INDEXED_PACKS = 10_000;

/** How much of a pack one read takes while scanning it. */
const SCAN_CHUNK = 1024 * 1024;
/** Records of one thread closer than this are read with one read, the bytes between included. */
const READ_GAP = 16 * 1024;

/** The pack a thread id names, when it has the shape of a generated id. */
export function packOf(threadId: string): string | undefined {
  return PACKED_ID.exec(threadId)?.[1];
}

/** What a scan found of one thread in a pack. */
interface PackedThread {
  /** Start and end (exclusive, before RECORD_END) of each of its records' lines in the pack, in order. */
  ranges: number[];
  /** The bytes its records take in the pack, framing included (see frame). */
  bytes: number;
}

/** What is known of one pack's contents, up to `scanned`. */
interface PackIndex {
  /** Bytes of the pack scanned: just after a newline, or at the end of a whole record. */
  scanned: number;
  threads: Map<string, PackedThread>;
  /** Records whose ranges are kept. */
  records: number;
  /** The ranges were dropped (see PACK_LIMITS.indexedRecords): only the byte counts are whole. */
  countsOnly?: boolean;
}

/** One record for a pack: format 2 log lines (each ending with a newline), as one write appends them. */
export function frame(threadId: string, lines: string): string {
  const joined = lines.endsWith('\n') ? lines.slice(0, -1) : lines;
  return `\n${threadId} ${joined.replaceAll('\n', LINE_SEPARATOR)}\x1e\n`;
}

/** The packs of one threads folder: which pack new threads go to, and reading what packs hold. */
export class Packs {
  private current: { name: string; threads: number; bytes: number } | undefined;
  /** Most recently used last. */
  private readonly indexes = new Map<string, PackIndex>();
  private indexedRecords = 0;
  /**
   * Packs this process created, with the size each has if only this process appended to it: while
   * a pack is that size, no thread of it changed but by this process. A pack found at another size
   * (changed) leaves this map and is scanned for what changed from then on, as is one another
   * process created.
   */
  private readonly quiet = new Map<string, number>();
  /** Packs whose first record says a newer format: refused, with the same error each time. */
  private readonly refused = new Map<string, AgentportError>();

  /**
   * @param dir the packs' folder (`threads/packs`)
   * @param dataDir the data folder, which errors name a pack relative to
   */
  constructor(
    readonly dir: string,
    private readonly formatVersion: number,
    private readonly dataDir: string,
  ) {}

  file(pack: string): string {
    return path.join(this.dir, `${pack}.jsonl`);
  }

  /** An id for a new thread, naming the pack its log goes to. */
  newThreadId(): string {
    let pack = this.current;
    if (pack === undefined || pack.threads >= PACK_LIMITS.threads || pack.bytes >= PACK_LIMITS.bytes) {
      pack = this.current = { name: randomBytes(4).toString('hex'), threads: 0, bytes: 0 };
    }
    pack.threads += 1;
    return pack.name + randomUUID().slice(8);
  }

  /**
   * Opens a pack for appending (and reading), creating it with its first record when it does
   * not exist. Another process may have created it, or be creating it: both then append to it.
   */
  open(pack: string): number {
    const file = this.file(pack);
    let fd: number;
    try {
      fd = openSync(file, 'ax+', 0o600);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return openSync(file, 'a+');
      throw err;
    }
    this.quiet.set(pack, 0);
    try {
      this.append(fd, pack, Buffer.from(frame(PACK_MARKER, JSON.stringify({ version: this.formatVersion }))));
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    // The new name must survive a power loss like what is written in the pack (off the caller's path).
    syncDirectory(this.dir);
    return fd;
  }

  /**
   * Appends one record (see {@link frame}) to an open pack in one write. Notes its size against
   * the pack being filled, and the size a pack that only this process writes now has.
   */
  append(fd: number, pack: string, record: Buffer): void {
    // Opened for appending: the write lands at the end of the file, whatever another process appended.
    // One write only: the rest of a short one could land after another process's record, cut from its start.
    try {
      const written = writeSync(fd, record);
      if (written < record.length) {
        // What a full disk or a file size limit does first; the write after it would fail outright.
        throw Object.assign(
          new Error(
            `only ${written} of ${record.length} bytes could be appended to ${this.file(pack)} (is the disk full, or a file size limit reached?)`,
          ),
          {
            code: 'EIO',
          },
        );
      }
    } catch (err) {
      this.quiet.delete(pack);
      throw err;
    }
    if (this.current?.name === pack) this.current.bytes += record.length;
    // The size the pack has if nobody else appended: checked when it matters (see changed), not after every write.
    const before = this.quiet.get(pack);
    if (before !== undefined) this.quiet.set(pack, before + record.length);
  }

  /**
   * Whether the thread's bytes in its pack differ from `known`, the bytes this process counts for
   * it: another process wrote it. `open`: the pack's descriptor, when the caller has it open.
   */
  changed(pack: string, threadId: string, known: number, open?: number): boolean {
    return this.withPack(pack, open, known !== 0, (fd) => {
      const quiet = this.quiet.get(pack);
      if (quiet !== undefined) {
        // Appends only add: a size of exactly what this process added means nobody else added anything.
        if (fstatSync(fd).size === quiet) return false;
        this.quiet.delete(pack);
      }
      return (this.scan(pack, fd).threads.get(threadId)?.bytes ?? 0) !== known;
    });
  }

  /** Whether a pack holds a whole record of the thread (after a write reported failed: it may have been whole). */
  holds(pack: string, threadId: string, open?: number): boolean {
    return this.withPack(pack, open, false, (fd) => this.scan(pack, fd).threads.has(threadId));
  }

  /**
   * What a pack holds for one thread, as a format 2 log (its lines, each ending with a newline),
   * and the bytes its records take in the pack; `undefined` when the pack holds none.
   */
  read(pack: string, threadId: string, open?: number): { bytes: Buffer; size: number } | undefined {
    return this.withPack(pack, open, undefined, (fd) => {
      let index = this.scan(pack, fd);
      if (index.countsOnly) {
        // Its ranges were dropped to stay within the budget: found again by a scan from the start.
        this.indexedRecords -= index.records;
        this.indexes.delete(pack);
        index = this.scan(pack, fd);
      }
      const entry = index.threads.get(threadId);
      if (entry === undefined) return undefined;
      const { ranges } = entry;
      const records: Buffer[] = [];
      for (let i = 0; i < ranges.length;) {
        // One read for records close together.
        let j = i + 2;
        while (j < ranges.length && ranges[j]! - ranges[j - 1]! <= READ_GAP) j += 2;
        const from = ranges[i]!;
        const span = Buffer.alloc(ranges[j - 1]! - from);
        readFully(fd, span, from);
        for (; i < j; i += 2) records.push(span.subarray(ranges[i]! - from, ranges[i + 1]! - from));
      }
      return { bytes: logOf(records), size: entry.bytes };
    });
  }

  /** The ids of the threads a pack holds whole records of (what was appended since the last look is scanned). */
  threadIds(pack: string, open?: number): string[] {
    return this.withPack(pack, open, [], (fd) => [...this.scan(pack, fd).threads.keys()].filter((id) => packOf(id) === pack));
  }

  /**
   * `use` with a descriptor of the pack: `open` (the caller's, left open) or one opened for it and
   * closed after; `absent` when the pack does not exist.
   */
  private withPack<T>(pack: string, open: number | undefined, absent: T, use: (fd: number) => T): T {
    let fd = open;
    if (fd === undefined) {
      try {
        fd = openSync(this.file(pack), 'r');
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return absent;
        throw err;
      }
    }
    try {
      return use(fd);
    } finally {
      if (open === undefined) closeSync(fd);
    }
  }

  /** Brings a pack's index up to its last whole record. */
  private scan(pack: string, fd: number): PackIndex {
    const refused = this.refused.get(pack);
    if (refused) throw refused;
    let index = this.indexes.get(pack);
    this.indexes.delete(pack);
    index ??= { scanned: 0, threads: new Map(), records: 0 };
    this.indexes.set(pack, index);
    const size = fstatSync(fd).size;
    const before = index.records;
    while (index.scanned < size) {
      let chunk = Buffer.alloc(Math.min(SCAN_CHUNK, size - index.scanned));
      readFully(fd, chunk, index.scanned);
      if (chunk.lastIndexOf(0x0a) < 0 && index.scanned + chunk.length < size) {
        // A record longer than a chunk: read up to its end (or what there is of it).
        const next = findNewline(fd, index.scanned + chunk.length, size);
        chunk = Buffer.alloc((next < 0 ? size : next + 1) - index.scanned);
        readFully(fd, chunk, index.scanned);
      }
      const taken = this.take(pack, index, chunk, chunk.length);
      if (taken === 0) break;
      index.scanned += taken;
    }
    this.indexedRecords += index.records - before;
    // Within the budget, or with nothing but this index's ranges to drop, the map is not walked: each walk steps over
    // the holes its deleted entries left.
    const droppable = this.indexedRecords - index.records;
    if ((this.indexedRecords <= PACK_LIMITS.indexedRecords || droppable === 0) && this.indexes.size <= INDEXED_PACKS) return index;
    // Least recently used first; the index just used stays whole, whatever its size.
    for (const [other, older] of this.indexes) {
      if (this.indexedRecords <= PACK_LIMITS.indexedRecords && this.indexes.size <= INDEXED_PACKS) break;
      if (other === pack) continue;
      if (this.indexes.size > INDEXED_PACKS) this.indexes.delete(other);
      else if (older.countsOnly) continue;
      for (const entry of older.threads.values()) entry.ranges = [];
      older.countsOnly = true;
      this.indexedRecords -= older.records;
      older.records = 0;
    }
    return index;
  }

  /**
   * Indexes the whole records of `chunk` (read at index.scanned, `size` bytes of it); returns how
   * far it got: past the last newline, or past a whole record the chunk ends with.
   */
  private take(pack: string, index: PackIndex, chunk: Buffer, size: number): number {
    let start = 0;
    for (;;) {
      let lineEnd = chunk.indexOf(0x0a, start);
      if (lineEnd < 0 || lineEnd >= size) {
        // The last bytes: a whole record waiting for its newline counts; anything else waits.
        if (start < size && chunk[size - 1] === RECORD_END) lineEnd = size;
        else return start;
      }
      if (lineEnd > start && chunk[lineEnd - 1] === RECORD_END) this.record(pack, index, chunk, start, lineEnd);
      if (lineEnd === size) return size;
      start = lineEnd + 1;
    }
  }

  /** Indexes one whole record: `chunk[start..end)`, RECORD_END last. */
  private record(pack: string, index: PackIndex, chunk: Buffer, start: number, end: number): void {
    const space = chunk.indexOf(0x20, start);
    if (space <= start || space >= end) return;
    const id = chunk.toString('latin1', start, space);
    if (id === PACK_MARKER) return this.checkMarker(pack, chunk.toString('utf8', space + 1, end - 1));
    let entry = index.threads.get(id);
    if (entry === undefined) index.threads.set(id, (entry = { ranges: [], bytes: 0 }));
    // A record that starts with the thread record starts its log (see the module's comment).
    if (chunk.toString('latin1', space + 1, Math.min(space + 12, end)) === '{"version":') entry.ranges.length = 0;
    entry.ranges.push(index.scanned + space + 1, index.scanned + end - 1);
    // Its leading and trailing newlines count, as in what was written (frame).
    entry.bytes += end - start + 2;
    index.records += 1;
  }

  private checkMarker(pack: string, json: string): void {
    let version: unknown;
    try {
      version = (JSON.parse(json) as { version?: unknown }).version;
    } catch {
      return;
    }
    if (typeof version === 'number' && version > this.formatVersion) {
      const error = dataFileError(
        'UNSUPPORTED_VERSION',
        this.dataDir,
        (name) =>
          `${name(this.file(pack))} was written by a newer agentport (format version ${version}; this one reads up to ${this.formatVersion}): upgrade agentport to read it`,
      );
      this.refused.set(pack, error);
      throw error;
    }
  }
}

/** A format 2 log from a thread's records (their lines joined by LINE_SEPARATOR). */
function logOf(records: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const record of records) {
    // Only the separator's byte is changed: a copy, not to touch the pack's bytes read elsewhere.
    const lines = Buffer.from(record);
    for (let at = lines.indexOf(0x1f); at >= 0; at = lines.indexOf(0x1f, at + 1)) lines[at] = 0x0a;
    parts.push(lines, NEWLINE);
  }
  return Buffer.concat(parts);
}

const NEWLINE = Buffer.from('\n');

function readFully(fd: number, into: Buffer, position: number): void {
  let read = 0;
  while (read < into.length) {
    const n = readSync(fd, into, read, into.length - read, position + read);
    if (n === 0) throw new AgentportError('CORRUPT_DATA', 'a pack ended before what was read of it');
    read += n;
  }
}

/** The position of the first newline at or after `from`, or -1 before `size`. */
function findNewline(fd: number, from: number, size: number): number {
  const buf = Buffer.alloc(64 * 1024);
  for (let at = from; at < size; at += buf.length) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    const i = buf.subarray(0, n).indexOf(0x0a);
    if (i >= 0) return at + i;
  }
  return -1;
}

/** fsyncs a folder (its entries), in the thread pool; a failure changes nothing but durability. */
function syncDirectory(dir: string): void {
  openFile(dir, 'r', (error, fd) => {
    if (error) return;
    fsync(fd, () => close(fd, () => {}));
  });
}
