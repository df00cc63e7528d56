import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sameStamps, stampFolder } from '../../src/server/startupCache/stamps.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentport-stamps-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await writeFile(path.join(dir, file), text);
}

describe('[ST-5] the start-up cache key (stampFolder)', () => {
  it('stamps every file discovery could read, by its path from the folder, with size and mtime, sorted', async () => {
    await write('prompts/a.ts', 'a');
    await write('tools/nested/deeper/b.prompty', 'bb');
    await write('mcp.json', '{}');
    await write('.hidden.ts', 'no');
    await write('prompts/.draft.ts', 'no');
    await write('node_modules/pkg/index.js', 'no');
    await write('tools/node_modules/x.js', 'no');
    await write('prompts/.wip/draft.ts', 'no');
    await write('.git/HEAD', 'no');
    await symlink(path.join(dir, 'prompts', 'a.ts'), path.join(dir, 'linked.ts'));
    await symlink(path.join(dir, 'missing.ts'), path.join(dir, 'dangling.ts'));
    await symlink(path.join(dir, 'loop-b.ts'), path.join(dir, 'loop-a.ts'));
    await symlink(path.join(dir, 'loop-a.ts'), path.join(dir, 'loop-b.ts'));
    const at = new Date('2026-01-02T03:04:05Z');
    await utimes(path.join(dir, 'prompts', 'a.ts'), at, at);
    const stamps = stampFolder(dir);
    expect(stamps.map(([file, size]) => [file, size])).toEqual([
      ['linked.ts', 1],
      ['mcp.json', 2],
      ['prompts/a.ts', 1],
      ['tools/nested/deeper/b.prompty', 2],
    ]);
    expect(stamps.find(([file]) => file === 'prompts/a.ts')?.[2]).toBe(at.getTime());
    // The same folder given with a trailing separator or a relative path is the same key.
    expect(sameStamps(stampFolder(`${dir}${path.sep}`), stamps)).toBe(true);
    expect(sameStamps(stampFolder(path.relative(process.cwd(), dir)), stamps)).toBe(true);
  });

  it('changes with any edit, addition or removal', async () => {
    await write('prompts/a.ts', 'a');
    const before = stampFolder(dir);
    await write('prompts/a.ts', 'ab');
    const edited = stampFolder(dir);
    expect(sameStamps(before, edited)).toBe(false);
    await write('prompts/b.ts', 'b');
    expect(sameStamps(edited, stampFolder(dir))).toBe(false);
    await rm(path.join(dir, 'prompts', 'b.ts'));
    expect(sameStamps(edited, stampFolder(dir))).toBe(true);
  });

  it('changes with a same-size edit whose modification time was put back (touch -r, cp -p, rsync -t)', async () => {
    await write('prompts/a.ts', 'aaaa');
    const file = path.join(dir, 'prompts', 'a.ts');
    const at = new Date('2026-01-02T03:04:05Z');
    await utimes(file, at, at);
    const before = stampFolder(dir);
    // The change time moves on by the clock's next tick at the least.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await write('prompts/a.ts', 'bbbb');
    await utimes(file, at, at);
    const after = stampFolder(dir);
    expect(after.map(([name, size, mtime]) => [name, size, mtime])).toEqual(before.map(([name, size, mtime]) => [name, size, mtime]));
    expect(sameStamps(before, after)).toBe(false);
  });

  it('leaves out the data folder when it lies inside the agents folder (what a call writes there is no edit)', async () => {
    await write('prompts/a.ts', 'a');
    await write('data/threads/t1/messages.jsonl', '{}');
    await write('database/notes.md', 'kept');
    expect(stampFolder(dir, [path.join(dir, 'data')]).map(([file]) => file)).toEqual(['database/notes.md', 'prompts/a.ts']);
    expect(stampFolder(dir).map(([file]) => file)).toContain('data/threads/t1/messages.jsonl');
    // A data folder that holds the agents folder (or is it) leaves nothing out.
    expect(stampFolder(dir, [path.dirname(dir)]).length).toBe(3);
    expect(stampFolder(dir, [dir]).length).toBe(3);
  });

  it('is empty for a folder that does not exist', () => {
    expect(stampFolder(path.join(dir, 'nothing'))).toEqual([]);
  });
});
