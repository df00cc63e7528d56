/**
 * Sits between stdin and the stdio transport: a JSON-RPC message (one line)
 * longer than the limit is dropped instead of ending the connection, and a
 * request among them is answered with a JSON-RPC error naming the limit.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Bytes kept from each end of a dropped line, to find its id. */
const EDGE = 4096;

export class MessageSizeGuard extends Transform {
  private parts: Buffer[] = [];
  private size = 0;
  private dropping = false;
  private head = '';
  private tail = Buffer.alloc(0);

  constructor(
    private readonly limitBytes: number,
    private readonly onDropped: (info: { id: string | number | undefined; bytes: number }) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
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
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.size > 0) this.endLine();
    callback();
  }

  private accept(part: Buffer): void {
    if (part.length === 0) return;
    this.size += part.length;
    if (!this.dropping && this.size > this.limitBytes) {
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
    if (this.dropping) this.onDropped({ id: requestId(this.head) ?? requestId(this.tail.toString('utf8')), bytes: this.size });
    else if (this.parts.length) this.push(Buffer.concat(this.parts));
    this.parts = [];
    this.size = 0;
    this.dropping = false;
    this.head = '';
    this.tail = Buffer.alloc(0);
  }
}

/** The top-level `"id"` of a JSON-RPC request, read from a fragment of it (best effort). */
function requestId(fragment: string): string | number | undefined {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]/.exec(fragment);
  if (!match?.[1]) return undefined;
  try {
    return JSON.parse(match[1]) as string | number;
  } catch {
    return undefined;
  }
}
