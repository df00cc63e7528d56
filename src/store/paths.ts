/**
 * Validation of thread ids and thread file paths (TL-7).
 *
 * Thread file paths come from models and tools, so they are untrusted: they are normalised
 * to POSIX paths rooted at `/` and anything that could leave the thread's files is refused.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError } from '../errors.js';

/**
 * Safe thread ids: a letter or digit, then letters, digits, `_` or `-`, at most 128 characters.
 * UUIDs match. Ids become folder names, so nothing that a file system treats specially
 * (`.`, `..`, separators, colons, case tricks with dots) is allowed.
 */
const THREAD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Whether `id` is a safe thread id (see {@link THREAD_ID_PATTERN}). */
export function isValidThreadId(id: unknown): id is string {
  return typeof id === 'string' && THREAD_ID_PATTERN.test(id);
}

/** Throws `INVALID_THREAD_ID` unless `id` is a safe thread id. */
export function assertValidThreadId(id: unknown, what = 'thread id'): asserts id is string {
  if (!isValidThreadId(id)) {
    throw new AgentportError(
      'INVALID_THREAD_ID',
      `Invalid ${what} ${JSON.stringify(id)}: use 1-128 letters, digits, "_" or "-", starting with a letter or digit`,
    );
  }
}

// Control characters make names that print misleadingly (and NUL truncates paths in C APIs).
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Whether `text` holds a control character (NUL included). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARS.test(text);
}

// Kept local (not imported from internal.ts) so this module has no import cycle.
function errnoCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** A path too long to quote whole in a message (the model reads it): its start and its length. */
export function shorten(input: string): string {
  return input.length <= 100 ? input : `${input.slice(0, 60)}… (${input.length} characters)`;
}

function invalidPath(input: string, reason: string): AgentportError {
  return new AgentportError('INVALID_PATH', `Invalid thread file path ${JSON.stringify(input)}: ${reason}`);
}

/** A file's own name: not blank, `.` or `..`, no path separator and no control character. */
export function isPlainFileName(name: string): boolean {
  return name.trim() !== '' && name !== '.' && name !== '..' && !/[/\\]/.test(name) && !CONTROL_CHARS.test(name);
}

/** Longest name of one path segment, in UTF-8 bytes: what file systems allow (ext4, APFS, NTFS's 255 units). */
const MAX_SEGMENT_BYTES = 255;
/**
 * Longest normalised thread path, in UTF-8 bytes. Every store refuses to write longer ones alike: the file store's
 * host path (data folder, thread id, this) must stay under the host's limit (4096 bytes on Linux, 1024 on macOS: less
 * there only with a long data folder), and a path is something a model has to repeat.
 */
const MAX_PATH_BYTES = 1024;

/**
 * Normalises a thread file path to POSIX form rooted at `/`: `attachments//a/./b.png` becomes
 * `/attachments/a/b.png`; the root itself is `/`.
 *
 * Refused (`AgentportError` `INVALID_PATH`, naming the path): empty paths, NUL and other control
 * characters, backslashes (a separator on Windows, so `..\x` would be a traversal there), any
 * `..` segment (even one that would stay inside: a path that needs one is a mistake or an
 * attack), and on Windows a `:` (drive letters and alternate data streams). Lengths are not limited here:
 * a file about to be written goes through {@link normalizeThreadPathForWrite}.
 */
export function normalizeThreadPath(input: string): string {
  if (typeof input !== 'string' || input.length === 0) {
    throw invalidPath(String(input), 'the path is empty');
  }
  if (input.includes('\0')) throw invalidPath(input, 'it contains a NUL byte');
  if (CONTROL_CHARS.test(input)) throw invalidPath(input, 'it contains a control character');
  if (input.includes('\\')) throw invalidPath(input, 'it contains a backslash; use "/" as the separator');
  if (process.platform === 'win32' && input.includes(':')) {
    throw invalidPath(input, 'it contains ":"');
  }
  const out: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw invalidPath(input, '".." segments are not allowed');
    out.push(segment);
  }
  return '/' + out.join('/');
}

/**
 * {@link normalizeThreadPath} for a file about to be written, which also refuses a name over
 * {@link MAX_SEGMENT_BYTES} bytes or a path over {@link MAX_PATH_BYTES} bytes, so that all stores agree and the file
 * store never meets the host's own limits. Reads, listings and deletes are not held to them: a file stored before
 * the limits (on PostgreSQL, say) stays reachable.
 */
export function normalizeThreadPathForWrite(input: string): string {
  const normalized = normalizeThreadPath(input);
  // A UTF-16 unit is at most 3 bytes in UTF-8: shorter names and paths need no count.
  if (normalized.length * 3 <= MAX_SEGMENT_BYTES) return normalized;
  for (const segment of normalized.split('/')) {
    if (segment.length * 3 > MAX_SEGMENT_BYTES && Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      throw invalidPath(shorten(input), `a name in it is longer than ${MAX_SEGMENT_BYTES} bytes (UTF-8)`);
    }
  }
  if (normalized.length * 3 > MAX_PATH_BYTES && Buffer.byteLength(normalized) > MAX_PATH_BYTES) {
    throw invalidPath(shorten(input), `it is longer than ${MAX_PATH_BYTES} bytes (UTF-8)`);
  }
  return normalized;
}

/** Whether `child` is `root` or inside it; both must be absolute and resolved. */
export function isInside(root: string, child: string): boolean {
  if (child === root) return true;
  const rel = path.relative(root, child);
  // `..foo` is a legitimate name inside; only a `..` segment means outside.
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel);
}

/**
 * Maps a thread path to a host path under `filesDir` and checks, on disk, that following
 * symlinks cannot leave `filesDir`: the real path of the target (when it exists) or of its
 * deepest existing ancestor must stay inside the real path of `filesDir`.
 *
 * Missing directories are fine (writes create them, and a directory created later by the
 * store is a real directory inside). A dangling symlink at the target is allowed through
 * because writes replace the link itself (temp file + rename) and reads then find nothing.
 *
 * This guards against paths chosen by models and tools, not against another local process
 * swapping directories for symlinks between the check and the use.
 *
 * @returns the normalised thread path and the host path.
 */
export async function resolveThreadFile(filesDir: string, threadPath: string): Promise<{ threadPath: string; hostPath: string }> {
  const normalized = normalizeThreadPath(threadPath);
  const root = path.resolve(filesDir);
  const hostPath = path.join(root, ...normalized.split('/').filter(Boolean));
  // Lexical check first: cheap, and catches anything normalisation might have missed.
  if (!isInside(root, hostPath)) throw invalidPath(threadPath, 'it resolves outside the thread files');

  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (err) {
    // No files directory yet: nothing on disk can redirect the path.
    if (errnoCode(err) === 'ENOENT') return { threadPath: normalized, hostPath };
    throw err;
  }

  let probe = hostPath;
  let real: string | undefined;
  while (real === undefined) {
    try {
      real = await realpath(probe);
    } catch (err) {
      const code = errnoCode(err);
      // Walk up until something exists; ENOTDIR means a file sits where a directory is
      // expected, which the actual read or write reports on its own.
      if ((code === 'ENOENT' || code === 'ENOTDIR') && probe !== root) {
        probe = path.dirname(probe);
        continue;
      }
      throw err;
    }
  }
  if (!isInside(realRoot, real)) {
    throw invalidPath(threadPath, 'it leads outside the thread files through a symbolic link');
  }
  return { threadPath: normalized, hostPath };
}

/**
 * Normalises a listing prefix (a directory) and returns the string a file path must start
 * with to be inside it, or `undefined` for the root (everything matches).
 */
export function directoryPrefix(prefix: string | undefined): { dir: string; startsWith: string | undefined } {
  if (prefix === undefined) return { dir: '/', startsWith: undefined };
  const dir = normalizeThreadPath(prefix);
  return { dir, startsWith: dir === '/' ? undefined : dir + '/' };
}

/** Whether the thread path `file` is at or under the directory described by {@link directoryPrefix}. */
export function matchesPrefix(file: string, prefix: { dir: string; startsWith: string | undefined }): boolean {
  return prefix.startsWith === undefined || file === prefix.dir || file.startsWith(prefix.startsWith);
}
