/**
 * A lock on one thread across processes sharing a data folder (two hosts
 * launching the same agents folder, say): a file created exclusively under
 * `<dir>/locks/`, holding its owner's pid, host and a heartbeat (its mtime,
 * refreshed while held). A lock whose owner is gone (a pid no longer alive on
 * this host, or a heartbeat older than STALE_MS) is taken over.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError } from '../errors.js';

const HEARTBEAT_MS = 5_000;
const STALE_MS = 30_000;
const POLL_MS = 50;

interface Owner {
  pid: number;
  host: string;
  since: string;
}

/** Lock files this process holds: removed on exit too, so a stop never leaves one behind. */
const held = new Set<string>();
let exitHookInstalled = false;

function removeHeldOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const file of held) {
      try {
        unlinkSync(file);
      } catch {
        // Gone already.
      }
    }
  });
}

/** Lock folders known to exist (a mkdir per turn is a system call saved). */
const madeDirs = new Set<string>();

export async function acquireThreadLock(locksDir: string, threadId: string, waitMs: number): Promise<() => Promise<void>> {
  removeHeldOnExit();
  const file = path.join(locksDir, `${threadId}.lock`);
  const me: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const deadline = Date.now() + waitMs;
  if (!madeDirs.has(locksDir)) {
    await mkdir(locksDir, { recursive: true });
    madeDirs.add(locksDir);
  }
  for (;;) {
    // Taken on every turn of a continued thread: one synchronous exclusive create costs far less
    // than a trip through the thread pool.
    try {
      writeFileSync(file, JSON.stringify(me), { flag: 'wx' });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        // The folder was removed behind our back.
        madeDirs.delete(locksDir);
        await mkdir(locksDir, { recursive: true });
        madeDirs.add(locksDir);
        continue;
      }
      if (code !== 'EEXIST') throw error;
    }
    if (await isStale(file)) {
      await takeOver(file);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new AgentportError(
        'THREAD_BUSY',
        `thread ${threadId} is busy in another process (${await ownerOf(file)}); try again when its turn has ended`,
        { threadId },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  held.add(file);
  const heartbeat = setInterval(() => {
    const now = new Date();
    void utimes(file, now, now).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    held.delete(file);
    // Only our own lock is removed: a stale-lock takeover by another process must not be undone.
    const current = readOwnerSync(file);
    if (current && current.pid === me.pid && current.host === me.host && current.since === me.since) {
      try {
        unlinkSync(file);
      } catch {
        // Gone already.
      }
    }
  };
}

function readOwnerSync(file: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

async function readOwner(file: string): Promise<Owner | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

async function ownerOf(file: string): Promise<string> {
  const owner = await readOwner(file);
  return owner ? `pid ${owner.pid} on ${owner.host}` : 'owner unknown';
}

async function isStale(file: string): Promise<boolean> {
  const [owner, info] = await Promise.all([readOwner(file), stat(file).catch(() => undefined)]);
  if (!info) return false;
  if (owner && owner.host === hostname()) {
    // Our own pid on a lock we do not hold: left by an earlier life of this pid (a restarted container).
    if (owner.pid === process.pid) return !held.has(file);
    if (!alive(owner.pid)) return true;
  }
  return Date.now() - info.mtimeMs > STALE_MS;
}

/**
 * Removes a stale lock so that only one waiter does it: the file is renamed
 * away (atomic; a second waiter's rename finds nothing) and deleted.
 */
async function takeOver(file: string): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${randomUUID()}`;
  try {
    await rename(file, aside);
  } catch {
    return;
  }
  await unlink(aside).catch(() => {});
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
