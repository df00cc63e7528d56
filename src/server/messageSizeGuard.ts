/**
 * Sits between stdin and the stdio transport: a JSON-RPC message (one line)
 * longer than the limit is dropped instead of ending the connection, and a
 * request among them is answered with a JSON-RPC error naming the limit.
 *
 * It reads its source's `data` events and pushes each line that passes: a
 * stream piped into (a Transform) would take every message through the
 * writable side's machinery too, a measurable part of a call over stdio.
 */
import { Readable } from 'node:stream';

/** Bytes kept from each end of a dropped line, to find its id. */
const EDGE = 4096;
const EMPTY = Buffer.alloc(0);

export class MessageSizeGuard extends Readable {
  private parts: Buffer[] = [];
  private size = 0;
  private dropping = false;
  private head = '';
  private tail = EMPTY;

  constructor(
    private readonly limitBytes: number,
    private readonly onDropped: (info: { id: string | number | undefined; bytes: number }) => void,
  ) {
    super();
  }

  private source: Readable | undefined;
  private readonly onData = (chunk: Buffer) => this.splitLines(chunk);
  private readonly onEnd = () => {
    if (this.size > 0) this.endLine();
    this.push(null);
  };
  private readonly onError = (error: Error) => this.destroy(error);

  /**
   * Reads `source` (stdin) to its end: the lines that pass come out of this stream whole, one chunk each.
   * The source is paused while this stream's reader does not keep up (a closed transport, say).
   */
  readFrom(source: Readable): this {
    this.source = source;
    source.on('data', this.onData);
    source.once('end', this.onEnd);
    source.once('error', this.onError);
    return this;
  }

  override _read(): void {
    this.source?.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.source?.off('data', this.onData).off('end', this.onEnd).off('error', this.onError);
    this.source = undefined;
    callback(error);
  }

  private splitLines(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline < 0 ? chunk.length : newline + 1;
      this.accept(chunk.subarray(start, end));
      if (newline < 0) break;
      this.endLine();
      start = end;
      if (start === chunk.length) break;
    }
  }

  private accept(part: Buffer): void {
    if (part.length === 0) return;
    this.size += part.length;
    // The line ending does not count toward the limit.
    if (!this.dropping && this.size - lineEnding(part) > this.limitBytes) {
      const line = Buffer.concat([...this.parts, part]);
      this.head = line.subarray(0, EDGE).toString('utf8');
      this.tail = line.subarray(-EDGE);
      this.parts = [];
      this.dropping = true;
      return;
    }
    if (this.dropping) this.tail = Buffer.concat([this.tail, part]).subarray(-EDGE);
    else this.parts.push(part);
  }

  private endLine(): void {
    if (this.dropping) this.onDropped({ id: topLevelId(this.head) ?? trailingId(this.tail.toString('utf8')), bytes: this.size });
    else if (this.parts.length && !this.push(this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts))) this.source?.pause();
    this.parts = [];
    this.size = 0;
    if (!this.dropping) return;
    this.dropping = false;
    this.head = '';
    this.tail = EMPTY;
  }
}

/** Bytes of `\n` or `\r\n` that end a part. */
function lineEnding(part: Buffer): number {
  if (part.at(-1) !== 10) return 0;
  return part.at(-2) === 13 ? 2 : 1;
}

/**
 * The `"id"` member of the top-level object, read from the start of the
 * message: keys inside params (a tool argument named id) do not count.
 */
function topLevelId(head: string): string | number | undefined {
  let depth = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') {
      const end = stringEnd(head, i);
      if (end < 0) return undefined;
      if (depth === 1 && head.slice(i, end + 1) === '"id"') {
        const match = /^\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(head.slice(end + 1));
        return match?.[1] ? (JSON.parse(match[1]) as string | number) : undefined;
      }
      i = end;
    } else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
  }
  return undefined;
}

/** Where the string starting at `start` ends (its closing quote), or -1 when it runs past the text. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** An `"id"` that is the last member of the message (how SDK clients write it). */
function trailingId(tail: string): string | number | undefined {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*}\s*$/.exec(tail);
  if (!match?.[1]) return undefined;
  try {
    return JSON.parse(match[1]) as string | number;
  } catch {
    return undefined;
  }
}
