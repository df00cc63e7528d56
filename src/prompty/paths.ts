/**
 * Confinement of file references (`${file:...}`, local media links) to the agents folder.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError } from '../errors.js';

/** A reference that may not be read (code `INVALID_PATH`); the message says why, without the resolved path's contents. */
function confinementError(message: string): AgentportError {
  return new AgentportError('INVALID_PATH', message);
}

function isInside(dir: string, candidate: string): boolean {
  const rel = path.relative(dir, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves `ref` (relative to `fromDir`, or absolute) to the real path of an existing file inside
 * `agentsDir`. Refuses paths that leave the folder lexically (`..`, absolute paths elsewhere) and
 * paths whose real location, after following symlinks, is outside it.
 *
 * @throws {AgentportError} with code `INVALID_PATH` when the path escapes, does not exist, or is not a regular location.
 */
export async function resolveConfined(ref: string, fromDir: string, agentsDir: string): Promise<string> {
  if (ref.trim() === '') throw confinementError('empty path');
  if (ref.includes('\0')) throw confinementError(`invalid path "${ref}"`);
  const root = path.resolve(agentsDir);
  const candidate = path.resolve(fromDir, ref);
  if (!isInside(root, candidate)) {
    const kind = path.isAbsolute(ref) ? 'absolute path' : 'path';
    throw confinementError(`${kind} "${ref}" is outside the agents folder`);
  }
  let realRoot: string;
  let realCandidate: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw confinementError(`agents folder "${agentsDir}" does not exist`);
  }
  try {
    realCandidate = await realpath(candidate);
  } catch {
    throw confinementError(`file "${ref}" not found`);
  }
  if (!isInside(realRoot, realCandidate)) {
    throw confinementError(`path "${ref}" leads outside the agents folder (symbolic link)`);
  }
  return realCandidate;
}

const MIME_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.svg': 'image/svg+xml',
  '.heic': 'image/heic',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

/** The MIME type for a file name's extension; `application/octet-stream` when unknown. */
export function mimeTypeOf(file: string): string {
  return MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}
