/**
 * What the file store reports when the host's file system refuses a thread file operation, or a file of the data
 * folder is damaged. Node's own errors quote host paths (the data folder, where the server runs), and their messages
 * reach the model: they are replaced by one naming the thread path and the system's error code only, and a damaged
 * file is named relative to the data folder.
 */
import path from 'node:path';
import { AgentportError, isAgentportError } from '../errors.js';
import { errnoCode, warn } from './internal.js';
import { shorten } from './paths.js';

/**
 * CORRUPT_DATA or UNSUPPORTED_VERSION about files of the data folder `dataDir`. `describe` says what is wrong, naming
 * each file with the function it is given: the error (which reaches clients and the model) names it relative to the
 * data folder (`threads/packs/1a2b3c4d.jsonl`), the line written to stderr for the operator by its full path.
 */
export function dataFileError(
  code: 'CORRUPT_DATA' | 'UNSUPPORTED_VERSION',
  dataDir: string,
  describe: (name: (file: string) => string) => string,
  cause?: unknown,
): AgentportError {
  warn(`${code}: ${describe((file) => file)}`);
  const relative = (file: string) => path.relative(dataDir, file).split(path.sep).join('/');
  return new AgentportError(code, describe(relative), undefined, cause === undefined ? undefined : { cause });
}

/** `error` unchanged when it is agentport's own (or not a system error); otherwise one without host paths. */
export function threadFileError(error: unknown, action: 'write' | 'read' | 'delete', threadId: string, threadPath: string): unknown {
  if (isAgentportError(error)) return error;
  const code = errnoCode(error);
  if (code === undefined) return error;
  // A path may be as long as the caller (a model) made it: its beginning names it.
  const what = `Cannot ${action} thread file ${JSON.stringify(shorten(threadPath))} of thread ${threadId}`;
  // A write meets this only under a very long data folder: it is held to the store's own path limits (paths.ts).
  // A read or delete is not, and meets it with a path too long for the host.
  if (code === 'ENAMETOOLONG') {
    return new AgentportError('INVALID_PATH', `${what}: the path is too long for the data folder's file system`, undefined, {
      cause: error,
    });
  }
  return new AgentportError('INTERNAL', `${what}: the data folder's file system refused it (${code})`, { errno: code }, { cause: error });
}

/**
 * `error` unchanged when it is agentport's own (or not a system error); otherwise one naming the thread and the
 * system's error code, not the host path (kept as the error's `cause`).
 */
export function threadStoreError(error: unknown, threadId: string): unknown {
  if (isAgentportError(error)) return error;
  const code = errnoCode(error);
  if (code === undefined) return error;
  return new AgentportError(
    'INTERNAL',
    `Cannot read or write thread ${threadId}: the data folder's file system refused it (${code})`,
    { errno: code, threadId },
    { cause: error },
  );
}
