/**
 * Packs: logs that many threads share (the file store's format 3).
 *
 * Creating a file is what a new thread cost the file store: the file system's work for a new
 * file (and its writeback) came to about as much CPU as the rest of a one-step call. A thread
 * whose id the store generates therefore keeps its log in a pack, `threads/packs/<pack>.jsonl`,
 * which the threads created after it share until the pack is full ({@link PACK_LIMITS}); the
 * pack's name is the first group of the thread's id, so a reader finds it without an index.
 *
 * Each record is written as `\n<thread id> <record>\n`: the record is a line of the thread's log
 * exactly as in format 2 (its first line the thread record, then messages and operations). The
 * leading newline ends whatever an interrupted write left before it, so a torn fragment is a line
 * of its own (which does not parse, and is skipped) and never glues onto the next record; a
 * record is complete once its own newline is written. Appends from several processes do not mix
 * (each is one write to a file opened for appending). The first record is `- {"version":3}`.
 *
 * A reader scans a pack once and then only what was appended since (see {@link PackIndex}): which
 * byte ranges hold each thread's records, and how many bytes each thread has in it, which is how
 * a change by another process is noticed (like a format 2 log's size).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AgentportError } from '../errors.js';
import { errnoCode } from './internal.js';

/** When the pack new threads go to is full: a new one is started. @internal (tests lower them) */
export const PACK_LIMITS = { threads: 1000, bytes: 8 * 1024 * 1024 };

/** The pack's own first record, written with its creation. */
const PACK_MARKER = '-';

/** A generated thread id: a UUID whose first group (8 hex digits) names its pack. */
const PACKED_ID = /^([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Packs whose index is kept; beyond, the least recently used one is dropped (and scanned again when needed). */
const INDEXED_PACKS = 64;

/** How much of a pack one read takes while scanning it. */
const SCAN_CHUNK = 1024 * 1024;

/** The pack a thread id names, when it has the shape of a generated id. */
export function packOf(threadId: string): string | undefined {
  return PACKED_ID.exec(threadId)?.[1];
}

/** What a scan found of one thread in a pack. */
interface PackedThread {
  /** Start and end (exclusive) of each of its records in the pack, in order, without the id. */
  ranges: number[];
  /** The bytes its records take in the pack, framing included (see framedRecords). */
  bytes: number;
}

/** What is known of one pack's contents, up to `scanned`. */
interface PackIndex {
  /** Bytes of the pack scanned: always just after a newline. */
  scanned: number;
  threads: Map<string, PackedThread>;
}

/** Each line of `lines` (format 2 log lines, each ending with a newline) framed for a pack. */
export function framedRecords(threadId: string, lines: string): string {
  let out = '';
  let start = 0;
  for (let end = lines.indexOf('\n'); end >= 0; end = lines.indexOf('\n', start)) {
    if (end > start) out += `\n${threadId} ${lines.slice(start, end)}\n`;
    start = end + 1;
  }
  if (start < lines.length) out += `\n${threadId} ${lines.slice(start)}\n`;
  return out;
}

/** The packs of one threads folder: which pack new threads go to, and reading what packs hold. */
export class Packs {
  readonly dir: string;
  private current: { name: string; threads: number; bytes: number } | undefined;
  private readonly indexes = new Map<string, PackIndex>();
  /** Packs whose first record says a newer format: refused, with the same error each time. */
  private readonly refused = new Map<string, AgentportError>();

  constructor(
    threadsDir: string,
    private readonly formatVersion: number,
  ) {
    this.dir = path.join(threadsDir, 'packs');
  }

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
    try {
      const fd = openSync(file, 'ax+', 0o600);
      const marker = Buffer.from(`\n${PACK_MARKER} ${JSON.stringify({ version: this.formatVersion })}\n`);
      try {
        this.write(fd, marker);
      } catch (err) {
        closeSync(fd);
        throw err;
      }
      return fd;
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return openSync(file, 'a+');
      throw err;
    }
  }

  /** Appends records (already framed) to an open pack in one write; notes their size against the pack being filled. */
  append(fd: number, pack: string, records: Buffer): void {
    this.write(fd, records);
    if (this.current?.name === pack) this.current.bytes += records.length;
  }

  private write(fd: number, data: Buffer): void {
    // Opened for appending: each write lands at the end of the file, whatever another process appended.
    let written = 0;
    while (written < data.length) written += writeSync(fd, data, written);
  }

  /**
   * What a pack holds for one thread, as a format 2 log (its lines, each ending with a newline),
   * and the bytes its records take in the pack; `undefined` when the pack holds none.
   */
  read(pack: string, threadId: string, open?: number): { bytes: Buffer; size: number } | undefined {
    const fd = open ?? this.openForReading(pack);
    if (fd === undefined) return undefined;
    try {
      const entry = this.scan(pack, fd).threads.get(threadId);
      if (entry === undefined) return undefined;
      const { ranges } = entry;
      const from = ranges[0]!;
      const span = Buffer.alloc(ranges[ranges.length - 1]! - from);
      readFully(fd, span, from);
      const parts: Buffer[] = [];
      for (let i = 0; i < ranges.length; i += 2) {
        parts.push(span.subarray(ranges[i]! - from, ranges[i + 1]! - from), NEWLINE);
      }
      return { bytes: Buffer.concat(parts), size: entry.bytes };
    } finally {
      if (open === undefined) closeSync(fd);
    }
  }

  /**
   * The bytes a thread's records take in its pack now (0 when there is no such pack or thread).
   * `open`: the pack's descriptor, when the caller has it open (it stays open).
   */
  sizeOf(pack: string, threadId: string, open?: number): number {
    const fd = open ?? this.openForReading(pack);
    if (fd === undefined) return 0;
    try {
      return this.scan(pack, fd).threads.get(threadId)?.bytes ?? 0;
    } finally {
      if (open === undefined) closeSync(fd);
    }
  }

  /** The ids of the threads a pack holds records of. */
  threadIds(pack: string): string[] {
    const fd = this.openForReading(pack);
    if (fd === undefined) return [];
    try {
      return [...this.scan(pack, fd).threads.keys()].filter((id) => packOf(id) === pack);
    } finally {
      closeSync(fd);
    }
  }

  private openForReading(pack: string): number | undefined {
    try {
      return openSync(this.file(pack), 'r');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Brings a pack's index up to its last complete record. */
  private scan(pack: string, fd: number): PackIndex {
    const refused = this.refused.get(pack);
    if (refused) throw refused;
    let index = this.indexes.get(pack);
    // Most recently used last.
    this.indexes.delete(pack);
    if (index === undefined) {
      index = { scanned: 0, threads: new Map() };
      for (const [other] of this.indexes) {
        if (this.indexes.size < INDEXED_PACKS) break;
        this.indexes.delete(other);
      }
    }
    this.indexes.set(pack, index);
    const size = fstatSync(fd).size;
    while (index.scanned < size) {
      const chunk = Buffer.alloc(Math.min(SCAN_CHUNK, size - index.scanned));
      readFully(fd, chunk, index.scanned);
      let end = chunk.lastIndexOf(0x0a) + 1;
      if (end === 0) {
        // A record longer than a chunk: read up to its end (or stop at a fragment still being written).
        const next = findNewline(fd, index.scanned + chunk.length, size);
        if (next < 0) break;
        const whole = Buffer.alloc(next + 1 - index.scanned);
        readFully(fd, whole, index.scanned);
        end = whole.length;
        this.take(pack, index, whole, end);
      } else this.take(pack, index, chunk, end);
      index.scanned += end;
    }
    return index;
  }

  /** Indexes the records in `chunk` (read at index.scanned) up to `end`, just after a newline. */
  private take(pack: string, index: PackIndex, chunk: Buffer, end: number): void {
    for (let start = 0; start < end;) {
      const lineEnd = chunk.indexOf(0x0a, start);
      if (lineEnd > start) {
        const space = chunk.indexOf(0x20, start);
        if (space > start && space < lineEnd) {
          const id = chunk.toString('latin1', start, space);
          if (id === PACK_MARKER) this.checkMarker(pack, chunk.toString('utf8', space + 1, lineEnd));
          else {
            let entry = index.threads.get(id);
            if (entry === undefined) index.threads.set(id, (entry = { ranges: [], bytes: 0 }));
            entry.ranges.push(index.scanned + space + 1, index.scanned + lineEnd);
            entry.bytes += lineEnd - start + 2;
          }
        }
      }
      start = lineEnd + 1;
    }
  }

  private checkMarker(pack: string, json: string): void {
    let version: unknown;
    try {
      version = (JSON.parse(json) as { version?: unknown }).version;
    } catch {
      return; // a torn first record: the pack's creation was interrupted after it began
    }
    if (typeof version === 'number' && version > this.formatVersion) {
      const error = new AgentportError(
        'UNSUPPORTED_VERSION',
        `${this.file(pack)} was written by a newer agentport (format version ${version}; this one reads up to ${this.formatVersion}): upgrade agentport to read it`,
      );
      this.refused.set(pack, error);
      throw error;
    }
  }
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
