import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverDefinitionFiles } from '../../src/registry/discover.js';
import { stampFolder } from '../../src/server/startupCache/stamps.js';
import { writeFiles } from '../support/folders.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'agentport-walk-'));
  writeFiles(dir, { 'prompts/a.ts': 'a', 'prompts/deep/b.ts': 'b', 'tools/t.ts': 't', 'data/threads/x.jsonl': 'no' });
});
// rm copes with paths longer than the system allows in one call; fs.rm does not.
afterEach(() => execFileSync('rm', ['-rf', dir]));

/**
 * A folder nested deeper than a path may be long (PATH_MAX), as deep dependency trees get: listing it fails
 * with ENAMETOOLONG, so a walk that enters it fails (or, in the start-up cache key, comes back empty).
 */
function nestTooDeep(folder: string): void {
  const name = 'd'.repeat(200);
  execFileSync('bash', [
    '-c',
    `mkdir -p "$1" && cd "$1" && for i in $(seq 25); do mkdir ${name} && cd ${name}; done && echo x > f.js`,
    '-',
    folder,
  ]);
}

const relative = (file: string) => path.relative(dir, file).split(path.sep).join('/');

describe('[ST-5] one walk of the agents folder, which does not enter what it leaves out', () => {
  for (const skipped of ['node_modules/pkg', 'prompts/node_modules', '.git/objects', 'prompts/.wip']) {
    it(`discovery and the start-up cache key never list ${skipped}`, async () => {
      nestTooDeep(path.join(dir, skipped));
      const files = await discoverDefinitionFiles(dir);
      expect(files.map((f) => relative(f.file))).toEqual(['prompts/a.ts', 'prompts/deep/b.ts', 'tools/t.ts']);
      // The data folder is left out by the key (and --watch) only when given, as serve gives it.
      const stamps = stampFolder(dir, [path.join(dir, 'data')]);
      expect(stamps.map(([file]) => file)).toEqual(['prompts/a.ts', 'prompts/deep/b.ts', 'tools/t.ts']);
    });
  }

  it('the start-up cache key (and --watch) never lists the data folder given', () => {
    nestTooDeep(path.join(dir, 'data', 'threads'));
    expect(stampFolder(dir, [path.join(dir, 'data')]).map(([file]) => file)).toEqual(['prompts/a.ts', 'prompts/deep/b.ts', 'tools/t.ts']);
  });

  it('discovery and a full load leave out the data folder they are given (a stored file may look like a definition)', async () => {
    writeFiles(dir, { 'data/threads/t1/files/note.prompty': '---\nname: note\n---\nhi', 'prompts/c.prompty': '---\nname: c\n---\nhi' });
    const data = path.join(dir, 'data');
    expect((await discoverDefinitionFiles(dir, [data])).map((f) => relative(f.file))).toEqual([
      'prompts/a.ts',
      'prompts/c.prompty',
      'prompts/deep/b.ts',
      'tools/t.ts',
    ]);
    expect((await discoverDefinitionFiles(dir)).map((f) => relative(f.file))).toContain('data/threads/t1/files/note.prompty');
  });

  it('an agents folder that is missing is empty to both; one that is a file is empty to the key', async () => {
    expect(stampFolder(path.join(dir, 'nothing'))).toEqual([]);
    expect(await discoverDefinitionFiles(path.join(dir, 'nothing'))).toEqual([]);
    expect(stampFolder(path.join(dir, 'prompts', 'a.ts'))).toEqual([]);
  });
});
