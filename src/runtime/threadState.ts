/**
 * The `ThreadState` a tool receives: its thread, its variables, the thread's
 * files and the execution state (step count, side, abort signal).
 */
import type { ExecutionState, ThreadState } from '../definitions/types.js';
import type { AttachmentRef, FileInfo, Store, StoredMessage } from '../store/types.js';
import type { VariableScope } from './variables.js';

export interface ThreadFiles {
  read(path: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined>;
  write(path: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef>;
  list(prefix?: string): Promise<AttachmentRef[]>;
}

/** ThreadState with agentport's additions: messages and files. */
export interface RuntimeThreadState extends ThreadState {
  messages(): Promise<StoredMessage[]>;
  files: ThreadFiles;
}

export function createThreadState(options: {
  store: Store;
  threadId: string;
  prompt: string;
  scope: VariableScope;
  tool?: string;
  tenvNames?: readonly string[];
  execution: ExecutionState;
}): RuntimeThreadState {
  const { store, threadId, scope, tool } = options;
  const tenvs: Record<string, unknown> = {};
  for (const name of options.tenvNames ?? []) {
    const value = scope.get(name, tool);
    if (value !== undefined) tenvs[name] = value;
  }
  return {
    threadId,
    prompt: options.prompt,
    env: async (name) => scope.get(name, tool),
    tenvs,
    execution: options.execution,
    messages: () => store.listMessages(threadId),
    files: {
      read: (path) => store.readFile(threadId, path),
      write: (path, data, info) => store.writeFile(threadId, path, data, info),
      list: (prefix) => store.listFiles(threadId, prefix),
    },
  };
}
