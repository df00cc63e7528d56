/**
 * The files a load's definitions read with node:fs (fileReads.ts), counted
 * only when the load made the read: a tool answering a call while a `--watch`
 * reload runs reads for its call. (How serve and `--watch` key and follow them
 * is in startupCache.test.ts and e2e/watch.test.ts; this file's own code counts
 * as the definitions' here, being neither agentport's nor a package's.)
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readingFiles } from '../../src/server/startupCache/fileReads.js';
import { tempDir } from '../support/mcpClients.js';

describe('readingFiles', () => {
  it('[ST-5] counts what the load reads, not what other code in the process reads meanwhile', async () => {
    const dir = tempDir();
    const agentsDir = path.join(dir, 'agents');
    const ownRead = path.join(dir, 'own.md');
    const otherRead = path.join(dir, 'other.md');
    for (const file of [ownRead, otherRead]) fs.writeFileSync(file, 'text');
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    const loading = readingFiles(
      agentsDir,
      () => false,
      async () => {
        fs.readFileSync(ownRead, 'utf8');
        await paused;
        // After the pause, still the load's (its promises carry it on).
        return fs.existsSync(path.join(dir, 'absent'));
      },
    );
    // Read while the load waits, by code the load did not start: a call being answered, say.
    fs.readFileSync(otherRead, 'utf8');
    await new Promise((resolve) => setTimeout(resolve, 10));
    await fs.promises.readFile(otherRead, 'utf8');
    resume();
    const { result, files } = await loading;
    expect(result).toBe(false);
    expect(files.sort()).toEqual([path.join(dir, 'absent'), ownRead].sort());
    // Put back once the load is over.
    expect(fs.readFileSync.name).toBe('readFileSync');
  });

  it('disables the storage that marks the load: left enabled, it keeps promise hooks on for the life of the process', async () => {
    const runs = vi.spyOn(AsyncLocalStorage.prototype, 'run');
    const disables = vi.spyOn(AsyncLocalStorage.prototype, 'disable');
    try {
      await readingFiles(
        tempDir(),
        () => false,
        () => Promise.resolve(),
      );
      expect(runs.mock.contexts.length).toBeGreaterThan(0);
      for (const storage of runs.mock.contexts) expect(disables.mock.contexts).toContain(storage);
    } finally {
      runs.mockRestore();
      disables.mockRestore();
    }
  });
});
