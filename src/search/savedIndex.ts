/**
 * The byte layout of a saved search index: a JSON header, then whole-number
 * arrays as raw 32-bit integers. Postings are most of an index (350,000 at
 * 10,000 tools); as JSON, reading them back meant decoding UTF-8, parsing an
 * object per term and field, and converting every key, about 0.4 s at that
 * size. As raw integers they are copied out of the file in one step and each
 * term's postings are decoded when a search first reads them (termIndex.ts).
 *
 * Layout: the magic `APSI`; a 32-bit byte-order mark written in the machine's
 * own order (a machine of the other order reads a different number and
 * rebuilds rather than misreads); the header's length in bytes; the header
 * (UTF-8 JSON, with `arrays`: each array's length); zero padding to a
 * multiple of 4; the arrays one after the other.
 */
const MAGIC = [0x41, 0x50, 0x53, 0x49]; // 'APSI'
const BYTE_ORDER = 0x01020304;
const PREFIX_BYTES = 12;

/** What a saved index holds: a JSON-ready header and the integer arrays it describes. */
export interface IndexParts {
  header: Record<string, unknown>;
  arrays: Int32Array[];
}

export function packIndex({ header, arrays }: IndexParts): Uint8Array {
  const headerBytes = new TextEncoder().encode(JSON.stringify({ ...header, arrays: arrays.map((array) => array.length) }));
  const arraysAt = align4(PREFIX_BYTES + headerBytes.length);
  const total = arraysAt + arrays.reduce((sum, array) => sum + array.byteLength, 0);
  const bytes = new Uint8Array(total);
  bytes.set(MAGIC, 0);
  const prefix = new Uint32Array(bytes.buffer, 0, 3);
  prefix[1] = BYTE_ORDER;
  prefix[2] = headerBytes.length;
  bytes.set(headerBytes, PREFIX_BYTES);
  let at = arraysAt;
  for (const array of arrays) {
    bytes.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at);
    at += array.byteLength;
  }
  return bytes;
}

/** The parts of `bytes`, or undefined when they are not a saved index (or were saved on a machine of the other byte order). */
export function unpackIndex(bytes: Uint8Array): IndexParts | undefined {
  if (bytes.length < PREFIX_BYTES) return undefined;
  const prefix = integers(Uint32Array, bytes, 0, 3);
  if (MAGIC.some((byte, i) => bytes[i] !== byte) || prefix[1] !== BYTE_ORDER) return undefined;
  const headerLength = prefix[2]!;
  if (PREFIX_BYTES + headerLength > bytes.length) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + headerLength)));
  } catch {
    return undefined;
  }
  if (typeof header !== 'object' || header === null) return undefined;
  const lengths = (header as { arrays?: unknown }).arrays;
  if (!Array.isArray(lengths) || !lengths.every((length) => Number.isInteger(length) && length >= 0)) return undefined;
  let at = align4(PREFIX_BYTES + headerLength);
  if (at + (lengths as number[]).reduce((sum, length) => sum + length * 4, 0) !== bytes.length) return undefined;
  const arrays: Int32Array[] = [];
  for (const length of lengths as number[]) {
    arrays.push(integers(Int32Array, bytes, at, length));
    at += length * 4;
  }
  return { header: header as Record<string, unknown>, arrays };
}

/**
 * `count` integers at `at`: a view of `bytes` when they sit at a multiple of 4 in its buffer (a file read into a
 * buffer of its own, as the start-up cache does), else a copy (one memcpy), since a typed array must start at a
 * multiple of its element size. A view shares `bytes`: the caller leaves them as they are.
 */
function integers<T extends Int32Array | Uint32Array>(
  kind: { new (length: number): T; new (buffer: ArrayBufferLike, byteOffset: number, length: number): T },
  bytes: Uint8Array,
  at: number,
  count: number,
): T {
  if ((bytes.byteOffset + at) % 4 === 0) return new kind(bytes.buffer, bytes.byteOffset + at, count);
  const array = new kind(count);
  new Uint8Array(array.buffer).set(bytes.subarray(at, at + count * 4));
  return array;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
