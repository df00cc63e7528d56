/**
 * A lock on one thread across processes sharing a data folder (two hosts
 * launching the same agents folder, say): a file created exclusively under
 * `<dir>/locks/`, holding its owner's pid, host and a heartbeat (its mtime,
 * refreshed while held). A lock whose owner is gone (a pid no longer alive on
 * this host, or a heartbeat older than STALE_MS) is taken over.
 *
 * So the holder of a lock taken over (a process that was paused, or whose
 * heartbeat writes failed) learns it: each heartbeat checks that the file is
 * still its own, and one that could not be refreshed for GIVE_UP_MS is given
 * up. Either way the holder is told (`onLost`, THREAD_LOCK_LOST) and stops
 * writing the thread.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError } from '../errors.js';

const HEARTBEAT_MS = 5_000;
const STALE_MS = 30_000;
/**
 * A heartbeat not refreshed for this long gives the lock up: from STALE_MS on another process may take it over,
 * and timers run late on a loaded machine.
 */
const GIVE_UP_MS = STALE_MS - 2 * HEARTBEAT_MS;
const POLL_MS = 50;

interface Owner {
  pid: number;
  host: string;
  since: string;
  /** This acquisition's own: two stores of one process, or two acquisitions in one millisecond, differ. */
  token?: string;
}

/** Lock files this process holds, with the token of the acquisition: removed on exit too, so a stop never leaves one behind. */
const held = new Map<string, string>();
let exitHookInstalled = false;

function removeHeldOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [file, token] of held) removeIfOwn(file, token);
  });
}

/** Removes a lock file if it is still the one acquisition `token` created: a takeover must not be undone. */
function removeIfOwn(file: string, token: string): void {
  if (readOwnerSync(file)?.token !== token) return;
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

/** A lock held: its release, and the check a write of the thread makes first. */
export interface HeldThreadLock {
  (): Promise<void>;
  /**
   * Throws THREAD_LOCK_LOST when the lock is lost, or its heartbeat has not been refreshed for so long that another
   * process may take it over. Synchronous, so that a process resumed after a pause checks before its first write,
   * whatever runs before the heartbeat's timer (I/O that completed during the pause runs first).
   */
  check(this: void): void;
}

/** Lock folders known to exist (a mkdir per turn is a system call saved). */
const madeDirs = new Set<string>();

/**
 * Takes the lock of `threadId`, waiting up to `waitMs` (then THREAD_BUSY). `onLost` is called once, with
 * THREAD_LOCK_LOST, if the lock is lost while held; the release then leaves the lock file alone unless it is still its own.
 */
export async function acquireThreadLock(
  locksDir: string,
  threadId: string,
  waitMs: number,
  onLost?: (error: AgentportError) => void,
): Promise<HeldThreadLock> {
  removeHeldOnExit();
  const file = path.join(locksDir, `${threadId}.lock`);
  const me = { pid: process.pid, host: hostname(), since: new Date().toISOString(), token: randomUUID() } satisfies Owner;
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
  held.set(file, me.token);
  let released = false;
  let lost: AgentportError | undefined;
  let lastBeat = Date.now();
  let beating = false;
  const heartbeat = setInterval(() => void beat(), HEARTBEAT_MS);
  heartbeat.unref();
  const lose = (what: string) => {
    if (released || lost) return;
    lost = new AgentportError(
      'THREAD_LOCK_LOST',
      `${what}: the turn was stopped, since another process may now run the thread; continue the thread to run it again`,
      { threadId },
    );
    clearInterval(heartbeat);
    if (held.get(file) === me.token) held.delete(file);
    onLost?.(lost);
  };
  /** Lost (or silent so long that it may be), the lock is given up now: for the heartbeat and every write. */
  const gaveUp = (): AgentportError | undefined => {
    if (lost || released) return lost;
    const silent = Date.now() - lastBeat;
    if (silent > GIVE_UP_MS) lose(`thread ${threadId}'s lock could not be refreshed for ${Math.round(silent / 1000)} s`);
    return lost;
  };
  const beat = async () => {
    // First, before anything async: a process resumed after a pause must not write on while the check is under way.
    if (gaveUp()) return;
    if (beating) return;
    beating = true;
    try {
      const now = new Date();
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') lose(`thread ${threadId}'s lock file was removed`);
        return;
      }
      const owner = parseOwner(text);
      if (owner?.token !== me.token) {
        return lose(`another process (${describeOwner(owner)}) took over thread ${threadId}'s lock, whose heartbeat had gone stale`);
      }
      await utimes(file, now, now);
      lastBeat = now.getTime();
    } catch {
      // Not refreshed this time: given up once that has lasted GIVE_UP_MS.
    } finally {
      beating = false;
    }
  };
  const release = async () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    if (held.get(file) === me.token) held.delete(file);
    removeIfOwn(file, me.token);
  };
  return Object.assign(release, {
    check: () => {
      const error = gaveUp();
      if (error) throw error;
    },
  });
}

function parseOwner(text: string): Owner | undefined {
  try {
    return JSON.parse(text) as Owner;
  } catch {
    return undefined;
  }
}

function describeOwner(owner: Owner | undefined): string {
  return owner ? `pid ${owner.pid} on ${owner.host}` : 'owner unknown';
}

function readOwnerSync(file: string): Owner | undefined {
  try {
    return parseOwner(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

async function readOwner(file: string): Promise<Owner | undefined> {
  try {
    return parseOwner(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

async function ownerOf(file: string): Promise<string> {
  return describeOwner(await readOwner(file));
}

async function isStale(file: string): Promise<boolean> {
  const [owner, info] = await Promise.all([readOwner(file), stat(file).catch(() => undefined)]);
  if (!info) return false;
  if (owner && owner.host === hostname()) {
    // Our own pid on a lock this process does not hold: left by an earlier life of this pid (a restarted container).
    // One it holds is judged by its heartbeat, like another process's: its holder gives it up before it is stale.
    // (A token that differs from the one this process holds is a read older than a release and a new acquisition here:
    // the heartbeat judges, so that a fresh lock is never taken from its holder.)
    if (owner.pid === process.pid) {
      if (held.get(file) === undefined) return true;
    } else if (!alive(owner.pid)) return true;
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
