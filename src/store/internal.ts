/**
 * Helpers shared by the store implementations, so every store validates input and shapes
 * records the same way (the contract suite runs against all of them). Not part of the public API.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { AgentportError } from '../errors.js';
import { assertValidThreadId, hasControlCharacter } from './paths.js';
import type {
  AttachmentRef,
  FileInfo,
  MessagePatch,
  NewMessage,
  Role,
  StoredMessage,
  ThreadRecord,
  ThreadStatus,
  VariableValue,
} from './types.js';

/** The `code` of a Node.js system error (`ENOENT`, ...), if any. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = err.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** Writes a warning line to stderr (stdout belongs to the MCP protocol on stdio). */
export function warn(message: string): void {
  process.stderr.write(`agentport: warning: ${message}\n`);
}

/**
 * Runs tasks one after another per key. Used per thread so that `seq` assignment and
 * read-modify-write of JSON files never interleave; different threads run in parallel.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `task` after every task queued earlier under `key` has settled (failed ones too). */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // The task starts a turn later, once its tail is in the map: a task that queues on its own key waits for itself.
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    // Settled chains are dropped so the map does not grow with every thread ever touched.
    const settled = (): void => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = result.then(settled, settled);
    this.tails.set(key, tail);
    return result;
  }

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}

/**
 * At close: writes, thread by thread in each one's queue, the opening messages still waiting for their
 * thread's next write (AppendOptions.withNextWrite). A thread that cannot be written is reported; the rest go on.
 */
export async function writeWaitingAtClose(
  queue: KeyedQueue,
  threadIds: Iterable<string>,
  write: (threadId: string) => Promise<unknown>,
): Promise<void> {
  for (const threadId of [...threadIds]) {
    await queue
      .run(threadId, () => write(threadId))
      .catch((error: unknown) => {
        warn(`thread ${threadId} could not be written at close: ${error instanceof Error ? error.message : String(error)}`);
      });
  }
}

const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);
const STATUSES: ReadonlySet<string> = new Set<ThreadStatus>(['idle', 'running', 'completed', 'failed', 'cancelled', 'interrupted']);

/** Threads in the order `listThreads` gives them: oldest first, then by id. */
export function compareThreads(a: ThreadRecord, b: ThreadRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a value is one of the thread statuses. */
export function isThreadStatus(value: unknown): value is ThreadStatus {
  return typeof value === 'string' && STATUSES.has(value);
}

let lastMs = Number.NaN;
let lastIso = '';
let lastSecond = Number.NaN;
/** `YYYY-MM-DDTHH:MM:SS.` of lastSecond. */
let secondPrefix = '';

/**
 * Current time as ISO 8601. A step stamps several records, and a server between calls runs so much
 * other code that `toISOString` is cold each time (about 9 us a call measured in the stdio server,
 * against 0.5 us in a loop): it runs once a second here, and the milliseconds are appended.
 */
function now(): string {
  const ms = Date.now();
  if (ms === lastMs) return lastIso;
  lastMs = ms;
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    secondPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const milli = ms - second * 1000;
  lastIso = `${secondPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  return lastIso;
}

/** Marks a value {@link plainCopy} leaves to JSON itself. */
const UNUSUAL = Symbol('unusual');

/** Nesting beyond which {@link plainCopy} gives up (JSON then reports a cycle, or copies what is only deep). */
const PLAIN_DEPTH = 64;

/**
 * A copy of plain JSON data (strings, finite numbers, booleans, null, arrays of them and objects with
 * Object's prototype), or UNUSUAL for anything whose JSON form differs from itself (a Date or other
 * toJSON, undefined or a function in an array, a non-finite number, another prototype, a `__proto__`
 * key). A run stores a few messages per step, and this is several times faster than a JSON round trip.
 * When it gives up partway, JSON reads the value again: a getter then runs twice (its result is JSON's).
 */
function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : UNUSUAL;
    case 'object':
      break;
    default:
      return UNUSUAL;
  }
  if (value === null) return null;
  if (depth > PLAIN_DEPTH) return UNUSUAL;
  if (Array.isArray(value)) {
    // JSON calls an array's toJSON too (its own, or a subclass's).
    if (Object.getPrototypeOf(value) !== Array.prototype || 'toJSON' in value) return UNUSUAL;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = plainCopy(value[i], depth + 1);
      if (item === UNUSUAL) return UNUSUAL;
      out[i] = item;
    }
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return UNUSUAL;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    // JSON leaves out members that are undefined, functions or symbols.
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (key === '__proto__') return UNUSUAL;
    const copied = plainCopy(item, depth + 1);
    if (copied === UNUSUAL) return UNUSUAL;
    out[key] = copied;
  }
  return out;
}

/** Deep copy with JSON's meaning, so every store keeps exactly what a persisting store would. */
export function jsonCopy<T>(value: T, what: string): T {
  let plain: unknown = UNUSUAL;
  try {
    plain = plainCopy(value, 0);
  } catch {
    // A getter or proxy that throws: JSON below meets it too, and says what could not be stored.
  }
  if (plain !== UNUSUAL) return plain as T;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new AgentportError('INVALID_ARGUMENTS', `${what} cannot be stored: it is not JSON-serializable`, undefined, { cause: err });
  }
  if (text === undefined) throw new AgentportError('INVALID_ARGUMENTS', `${what} cannot be stored: it is not JSON-serializable`);
  return JSON.parse(text) as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates `createThread` input and builds the new record (`status: 'idle'`). */
export function buildThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): ThreadRecord {
  if (!isPlainObject(init)) throw new AgentportError('INVALID_ARGUMENTS', 'createThread needs an object');
  if (typeof init.prompt !== 'string' || init.prompt.length === 0) {
    throw new AgentportError('INVALID_ARGUMENTS', 'createThread needs a non-empty "prompt" (the prompt or agent name)');
  }
  if (init.id !== undefined) assertValidThreadId(init.id);
  if (init.parentId !== undefined) assertValidThreadId(init.parentId, 'parent thread id');
  if (init.meta !== undefined && !isPlainObject(init.meta)) {
    throw new AgentportError('INVALID_ARGUMENTS', 'thread "meta" must be an object');
  }
  const at = now();
  const record: ThreadRecord = { id: init.id ?? randomUUID(), prompt: init.prompt, createdAt: at, updatedAt: at, status: 'idle' };
  if (init.parentId !== undefined) record.parentId = init.parentId;
  if (init.meta !== undefined) record.meta = init.meta;
  return jsonCopy(record, `thread ${record.id}`);
}

/** Applies an `updateThread` patch to a copy of `thread`. */
export function patchThread(thread: ThreadRecord, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): ThreadRecord {
  if (!isPlainObject(patch)) throw new AgentportError('INVALID_ARGUMENTS', 'updateThread needs an object patch');
  if (patch.status !== undefined && !STATUSES.has(patch.status)) {
    throw new AgentportError('INVALID_ARGUMENTS', `Invalid thread status ${JSON.stringify(patch.status)}`);
  }
  if (patch.meta !== undefined && !isPlainObject(patch.meta)) {
    throw new AgentportError('INVALID_ARGUMENTS', 'thread "meta" must be an object');
  }
  const next: ThreadRecord = { ...thread, updatedAt: now() };
  if (patch.status !== undefined) next.status = patch.status;
  if (patch.meta !== undefined) next.meta = patch.meta;
  return jsonCopy(next, `thread ${thread.id}`);
}

/** Whether a parsed value looks like a thread record (used when reading files back). */
export function isThreadRecord(value: unknown): value is ThreadRecord {
  return (
    isPlainObject(value) &&
    typeof value.id === 'string' &&
    typeof value.prompt === 'string' &&
    typeof value.createdAt === 'string' &&
    typeof value.updatedAt === 'string' &&
    typeof value.status === 'string' &&
    STATUSES.has(value.status)
  );
}

/** Validates a message and stamps it with the store-assigned fields. */
export function buildMessage(threadId: string, seq: number, message: NewMessage): StoredMessage {
  if (!isPlainObject(message)) throw new AgentportError('INVALID_ARGUMENTS', `message for thread ${threadId} must be an object`);
  if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
    throw new AgentportError('INVALID_ARGUMENTS', `message for thread ${threadId} has an invalid role ${JSON.stringify(message.role)}`);
  }
  // A NUL cannot be kept in a PostgreSQL text column (the id is one there): refused by every store alike.
  if (message.id !== undefined && (typeof message.id !== 'string' || message.id.length === 0 || message.id.includes('\0'))) {
    throw new AgentportError('INVALID_ARGUMENTS', `message for thread ${threadId} has an invalid id`);
  }
  const { id: givenId, ...rest } = message;
  const stamp = { id: givenId ?? randomUUID(), threadId, seq, createdAt: now() };
  // Stamp twice: first for key order in the JSON, last so stray fields in `rest` cannot override.
  const stored: StoredMessage = Object.assign({}, stamp, rest, stamp);
  return jsonCopy(stored, `message for thread ${threadId}`);
}

/** Whether a parsed value looks like a stored message (used when reading files back). */
export function isStoredMessage(value: unknown): value is StoredMessage {
  return (
    isPlainObject(value) &&
    typeof value.id === 'string' &&
    typeof value.seq === 'number' &&
    Number.isInteger(value.seq) &&
    typeof value.role === 'string' &&
    ROLES.has(value.role)
  );
}

const PATCH_KEYS: ReadonlySet<string> = new Set(['content', 'meta', 'reasoning']);

/**
 * Validates `updateMessage` input and returns a copy of the patch holding only the fields that
 * are given (a field set to `undefined` is left out: it leaves the message's field as it is).
 */
export function validateMessagePatch(threadId: string, id: string, patch: MessagePatch): MessagePatch {
  if (typeof id !== 'string' || id.length === 0) {
    throw new AgentportError('INVALID_ARGUMENTS', `updateMessage for thread ${threadId} needs a non-empty message id`);
  }
  // No message has such an id (appendMessage refuses it); the database would refuse it as text.
  if (id.includes('\0')) throw messageNotFound(threadId, id);
  if (!isPlainObject(patch)) {
    throw new AgentportError('INVALID_ARGUMENTS', `updateMessage of message "${id}" in thread ${threadId} needs an object patch`);
  }
  for (const key of Object.keys(patch)) {
    if (!PATCH_KEYS.has(key)) {
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `updateMessage cannot change ${JSON.stringify(key)} of message "${id}" in thread ${threadId}: only content, meta and reasoning`,
      );
    }
  }
  const out: MessagePatch = {};
  if (patch.content !== undefined) {
    if (patch.content !== null && typeof patch.content !== 'string' && !Array.isArray(patch.content)) {
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `content of message "${id}" in thread ${threadId} must be a string, an array of parts or null`,
      );
    }
    out.content = patch.content;
  }
  if (patch.meta !== undefined) {
    if (!isPlainObject(patch.meta)) {
      throw new AgentportError('INVALID_ARGUMENTS', `"meta" of message "${id}" in thread ${threadId} must be an object`);
    }
    out.meta = patch.meta;
  }
  if (patch.reasoning !== undefined) {
    if (typeof patch.reasoning !== 'string') {
      throw new AgentportError('INVALID_ARGUMENTS', `"reasoning" of message "${id}" in thread ${threadId} must be a string`);
    }
    out.reasoning = patch.reasoning;
  }
  return jsonCopy(out, `update of message "${id}" in thread ${threadId}`);
}

/**
 * A copy of `message` with the patched fields replaced (only content, meta and reasoning, whatever
 * else `patch` holds). Patched values are cloned, so one patch can be applied to several messages.
 */
export function applyMessagePatch(message: StoredMessage, patch: MessagePatch): StoredMessage {
  const next: StoredMessage = { ...message };
  if (patch.content !== undefined) next.content = structuredClone(patch.content);
  if (patch.meta !== undefined) next.meta = structuredClone(patch.meta);
  if (patch.reasoning !== undefined) next.reasoning = patch.reasoning;
  return next;
}

/** Validates `deleteMessages` input; returns the ids without duplicates. */
export function validateMessageIds(threadId: string, ids: readonly string[]): string[] {
  if (!Array.isArray(ids)) {
    throw new AgentportError('INVALID_ARGUMENTS', `deleteMessages for thread ${threadId} needs an array of message ids`);
  }
  for (const id of ids) {
    if (typeof id !== 'string') {
      throw new AgentportError('INVALID_ARGUMENTS', `deleteMessages for thread ${threadId} needs message ids as strings`);
    }
  }
  // An id holding a NUL matches no message (appendMessage refuses it), and the database would refuse it as text.
  return [...new Set<string>(ids)].filter((id) => !id.includes('\0'));
}

/** The error for `updateMessage` of a message id the thread does not have. */
export function messageNotFound(threadId: string, id: string): AgentportError {
  return new AgentportError('INVALID_ARGUMENTS', `message "${id}" does not exist in thread ${threadId}`);
}

/**
 * Validates a file write and builds its reference. `threadPath` is already normalised;
 * the root directory is not a file.
 */
export function buildFileRef(threadPath: string, data: Uint8Array, info: FileInfo): AttachmentRef {
  if (threadPath === '/') {
    throw new AgentportError('INVALID_PATH', 'Invalid thread file path "/": it names the root directory, not a file');
  }
  if (!(data instanceof Uint8Array)) {
    throw new AgentportError('INVALID_ARGUMENTS', `data for ${threadPath} must be a Uint8Array`);
  }
  if (!isPlainObject(info) || typeof info.mimeType !== 'string' || info.mimeType.length === 0) {
    throw new AgentportError('INVALID_ARGUMENTS', `file ${threadPath} needs a non-empty mimeType`);
  }
  const ref: AttachmentRef = {
    id: randomUUID(),
    type: 'file',
    path: threadPath,
    name: info.name !== undefined && info.name.length > 0 ? info.name : path.posix.basename(threadPath),
    mimeType: info.mimeType,
    size: data.byteLength,
  };
  // Only set optional keys that have values, so every store returns the same shape.
  if (info.width !== undefined) ref.width = info.width;
  if (info.height !== undefined) ref.height = info.height;
  if (info.description !== undefined) ref.description = info.description;
  return ref;
}

/**
 * Whether writing a file at `threadPath` would clash with existing files: a file cannot also
 * be a directory. Stores that keep files in memory use this to behave like a file system.
 */
export function pathClash(threadPath: string, existing: Iterable<string>): string | undefined {
  for (const other of existing) {
    if (threadPath.startsWith(other + '/')) return `"${other}" is a file, not a directory`;
    if (other.startsWith(threadPath + '/')) return 'it is a directory';
  }
  return undefined;
}

/** Validates `setVariables` input; names only in errors, never values (PR-16). */
export function validateVariables(threadId: string, values: VariableValue[]): VariableValue[] {
  if (!Array.isArray(values)) throw new AgentportError('INVALID_ARGUMENTS', `setVariables for thread ${threadId} needs an array`);
  return values.map((v, i) => {
    if (!isPlainObject(v) || typeof v.name !== 'string' || v.name.length === 0) {
      throw new AgentportError('INVALID_ARGUMENTS', `variable #${i} for thread ${threadId} needs a non-empty name`);
    }
    // Names print in messages and logs (a control character would hide or fake text), and PostgreSQL keeps them as text (no NUL).
    if (hasControlCharacter(v.name)) {
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `variable ${JSON.stringify(v.name)} for thread ${threadId} has a control character in its name: use printable characters`,
      );
    }
    if (typeof v.value !== 'string') {
      throw new AgentportError('INVALID_ARGUMENTS', `variable "${v.name}" for thread ${threadId} needs a string value`);
    }
    if (typeof v.secret !== 'boolean') {
      throw new AgentportError('INVALID_ARGUMENTS', `variable "${v.name}" for thread ${threadId} needs a boolean "secret"`);
    }
    if (v.scoped !== undefined && typeof v.scoped !== 'boolean') {
      throw new AgentportError('INVALID_ARGUMENTS', `variable "${v.name}" for thread ${threadId} has a non-boolean "scoped"`);
    }
    const out: VariableValue = { name: v.name, value: v.value, secret: v.secret };
    if (v.scoped !== undefined) out.scoped = v.scoped;
    return out;
  });
}

/** Merges entries by `name`: replaced entries keep their position, new ones are appended. */
export function mergeByName<T extends { name: string }>(existing: readonly T[], incoming: readonly T[]): T[] {
  const merged = [...existing];
  const index = new Map(merged.map((v, i) => [v.name, i]));
  for (const entry of incoming) {
    const at = index.get(entry.name);
    if (at === undefined) {
      index.set(entry.name, merged.length);
      merged.push(entry);
    } else {
      merged[at] = entry;
    }
  }
  return merged;
}

/** The error for an operation on a thread that does not exist. */
export function threadNotFound(id: string): AgentportError {
  return new AgentportError('THREAD_NOT_FOUND', `Thread ${id} does not exist`);
}

/** Copies bytes into a fresh plain `Uint8Array` (not a Buffer view into a shared pool). */
export function copyBytes(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.byteLength);
  out.set(data);
  return out;
}
