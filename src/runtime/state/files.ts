/**
 * The ThreadState file API over the store. Every path is checked by the store
 * (no `..`, no escape from the thread's files). Directories are implicit:
 * a directory exists while a file is under it.
 */
import picomatch from 'picomatch';
import type { DirectoryEntry, FileRecord, GrepMatch } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import type { AttachmentRef, Store } from '../../store/types.js';

/** Files larger than this are skipped by grepFiles. */
const GREP_MAX_BYTES = 2 * 1024 * 1024;

export class ThreadFiles {
  constructor(
    private readonly store: Store,
    private readonly threadId: string,
  ) {}

  write(
    path: string,
    data: string | Uint8Array,
    mimeType: string,
    options: { name?: string; description?: string; width?: number; height?: number } = {},
  ): Promise<FileRecord> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    return this.store.writeFile(this.threadId, path, bytes, { mimeType, ...options });
  }

  async read(path: string): Promise<Uint8Array | null> {
    return (await this.store.readFile(this.threadId, path))?.data ?? null;
  }

  async stat(path: string): Promise<FileRecord | null> {
    return (await this.store.readFile(this.threadId, path))?.ref ?? null;
  }

  async readdir(path: string): Promise<DirectoryEntry[]> {
    const dir = directory(path);
    const entries = new Map<string, DirectoryEntry>();
    for (const ref of await this.store.listFiles(this.threadId, dir)) {
      const rest = ref.path.slice(dir.length);
      const slash = rest.indexOf('/');
      if (slash < 0) entries.set(rest, { name: rest, path: ref.path, type: 'file', size: ref.size });
      else {
        const name = rest.slice(0, slash);
        if (!entries.has(name)) entries.set(name, { name, path: `${dir}${name}`, type: 'directory' });
      }
    }
    return [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async unlink(path: string): Promise<void> {
    if (!(await this.store.deleteFile(this.threadId, path))) {
      throw new AgentportError('INVALID_PATH', `no file at ${path} in thread ${this.threadId}`);
    }
  }

  async mkdir(path: string): Promise<void> {
    // Validates the path the way the store does; nothing to create.
    await this.store.listFiles(this.threadId, directory(path));
  }

  async rmdir(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    const files = await this.store.listFiles(this.threadId, directory(path));
    if (files.length && !options.recursive) {
      throw new AgentportError(
        'INVALID_PATH',
        `directory ${path} is not empty (${files.length} file${files.length === 1 ? '' : 's'}); pass { recursive: true } to remove them`,
      );
    }
    for (const file of files) await this.store.deleteFile(this.threadId, file.path);
  }

  async find(pattern: string): Promise<FileRecord[]> {
    const matches = picomatch(pattern.startsWith('/') ? pattern : `/${pattern}`, { dot: true });
    return (await this.store.listFiles(this.threadId)).filter((ref) => matches(ref.path));
  }

  async grep(pattern: string | RegExp, options: { path?: string } = {}): Promise<GrepMatch[]> {
    const regex = typeof pattern === 'string' ? new RegExp(pattern) : new RegExp(pattern.source, pattern.flags.replace('g', ''));
    const out: GrepMatch[] = [];
    for (const ref of await this.store.listFiles(this.threadId, options.path ? directory(options.path) : undefined)) {
      if (ref.size > GREP_MAX_BYTES || !isText(ref.mimeType)) continue;
      const file = await this.store.readFile(this.threadId, ref.path);
      if (!file) continue;
      Buffer.from(file.data)
        .toString('utf8')
        .split('\n')
        .forEach((text, index) => {
          if (regex.test(text)) out.push({ path: ref.path, line: index + 1, text });
        });
    }
    return out;
  }
}

function directory(path: string): string {
  const withSlash = path.endsWith('/') ? path : `${path}/`;
  return withSlash.startsWith('/') ? withSlash : `/${withSlash}`;
}

function isText(mimeType: string): boolean {
  return mimeType.startsWith('text/') || /json|xml|yaml|javascript|csv|markdown/.test(mimeType);
}

/** A path for a new file that does not overwrite one: `name.txt`, else `name-2.txt`, `name-3.txt`... */
export async function freePath(store: Store, threadId: string, wanted: string): Promise<string> {
  if (!(await store.readFile(threadId, wanted))) return wanted;
  const dot = wanted.lastIndexOf('.');
  const [stem, ext] = dot > wanted.lastIndexOf('/') ? [wanted.slice(0, dot), wanted.slice(dot)] : [wanted, ''];
  for (let n = 2; ; n++) {
    const candidate = `${stem}-${n}${ext}`;
    if (!(await store.readFile(threadId, candidate))) return candidate;
  }
}

/**
 * Copies files of one thread into another's `/attachments/`, under their own
 * names (made unique), and returns the new references: paths valid in the
 * receiving thread. A path the sending thread does not have, or one that
 * leaves its files (`..`), is refused.
 */
export async function copyFilesAcross(
  store: Store,
  fromThread: string,
  toThread: string,
  paths: readonly string[],
): Promise<AttachmentRef[]> {
  const copied: AttachmentRef[] = [];
  for (const path of paths) {
    const file = await store.readFile(fromThread, path);
    if (!file) throw new AgentportError('INVALID_PATH', `${path} is not a file of the sending thread`);
    const target = await freePath(store, toThread, `/attachments/${file.ref.name || path.split('/').pop() || 'file'}`);
    copied.push(
      await store.writeFile(toThread, target, file.data, {
        mimeType: file.ref.mimeType,
        name: target.split('/').pop()!,
        ...(file.ref.description ? { description: file.ref.description } : {}),
      }),
    );
  }
  return copied;
}
