import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentportError } from '../../src/errors.js';
import {
  directoryPrefix,
  isInside,
  isValidThreadId,
  matchesPrefix,
  normalizeThreadPath,
  normalizeThreadPathForWrite,
  resolveThreadFile,
} from '../../src/store/paths.js';

describe('normalizeThreadPath', () => {
  it('roots paths at / and removes empty and . segments', () => {
    expect(normalizeThreadPath('attachments/chart.png')).toBe('/attachments/chart.png');
    expect(normalizeThreadPath('//attachments/./a//b/')).toBe('/attachments/a/b');
    expect(normalizeThreadPath('/')).toBe('/');
    expect(normalizeThreadPath('.')).toBe('/');
  });

  it('keeps names that merely start with dots', () => {
    expect(normalizeThreadPath('/attachments/..hidden')).toBe('/attachments/..hidden');
    expect(normalizeThreadPath('/.config/x')).toBe('/.config/x');
    expect(normalizeThreadPath('/a/.../b')).toBe('/a/.../b');
  });

  it('[TL-7] refuses .. segments, backslashes, NUL and control characters, naming the path', () => {
    for (const bad of ['..', '../x', '/a/../b', '/attachments/../../x', 'a\\b', '..\\x', 'a\0b', 'a\tb', 'a\u007fb', '']) {
      let caught: unknown;
      try {
        normalizeThreadPath(bad);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(AgentportError);
      expect((caught as AgentportError).code).toBe('INVALID_PATH');
      expect((caught as AgentportError).message).toContain(JSON.stringify(bad));
    }
  });
});

describe('normalizeThreadPathForWrite', () => {
  it('[ST-1] holds a path to be written to the length limits, which reads are not held to', () => {
    const longName = '/attachments/' + 'n'.repeat(256);
    const longPath = '/' + Array(300).fill('abcd').join('/');
    for (const long of [longName, longPath]) {
      expect(normalizeThreadPath(long)).toBe(long);
      expect(() => normalizeThreadPathForWrite(long)).toThrow(/longer than/);
    }
    expect(normalizeThreadPathForWrite('attachments//' + 'n'.repeat(255))).toBe('/attachments/' + 'n'.repeat(255));
    expect(() => normalizeThreadPathForWrite('/a/../b')).toThrow(/".." segments/);
  });
});

describe('thread ids', () => {
  it('accepts UUIDs and simple names, refuses anything that is not a safe folder name', () => {
    expect(isValidThreadId('0b7e6a3c-1d2f-4e5a-9b8c-7d6e5f4a3b2c')).toBe(true);
    expect(isValidThreadId('thread_1')).toBe(true);
    for (const bad of ['', '.', '..', '../a', 'a/b', 'a.b', '_a', 'a b', 'x'.repeat(129), 42]) {
      expect(isValidThreadId(bad)).toBe(false);
    }
  });
});

describe('prefixes and containment', () => {
  it('matches a directory prefix by whole segments', () => {
    const p = directoryPrefix('/attachments/');
    expect(matchesPrefix('/attachments/a.png', p)).toBe(true);
    expect(matchesPrefix('/attachments', p)).toBe(true);
    expect(matchesPrefix('/attachments-old/a.png', p)).toBe(false);
    expect(matchesPrefix('/x', directoryPrefix(undefined))).toBe(true);
    expect(matchesPrefix('/x', directoryPrefix('/'))).toBe(true);
  });

  it('treats ..name as inside and .. as outside', () => {
    const root = path.resolve('/srv/files');
    expect(isInside(root, path.join(root, '..name'))).toBe(true);
    expect(isInside(root, root)).toBe(true);
    expect(isInside(root, path.resolve('/srv'))).toBe(false);
    expect(isInside(root, path.resolve('/srv/files-other'))).toBe(false);
  });
});

describe('resolveThreadFile', () => {
  let base: string;
  let filesDir: string;
  let outside: string;

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'agentport-paths-'));
    filesDir = path.join(base, 'files');
    outside = path.join(base, 'outside');
    await mkdir(path.join(filesDir, 'attachments'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(outside, 'target.txt'), 'x');
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('maps a thread path under the files dir, including not-yet-existing directories', async () => {
    const r = await resolveThreadFile(filesDir, 'attachments/new/dir/a.png');
    expect(r).toEqual({ threadPath: '/attachments/new/dir/a.png', hostPath: path.join(filesDir, 'attachments', 'new', 'dir', 'a.png') });
  });

  it('works before the files dir exists', async () => {
    const r = await resolveThreadFile(path.join(base, 'missing'), '/a.txt');
    expect(r.hostPath).toBe(path.join(base, 'missing', 'a.txt'));
  });

  it('[TL-7] refuses paths through a directory symlink that leads outside', async () => {
    await symlink(outside, path.join(filesDir, 'attachments', 'out'), 'dir');
    await expect(resolveThreadFile(filesDir, '/attachments/out/target.txt')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(resolveThreadFile(filesDir, '/attachments/out/missing/deep.txt')).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });

  it('[TL-7] refuses a file symlink that leads outside', async () => {
    await symlink(path.join(outside, 'target.txt'), path.join(filesDir, 'attachments', 'f.txt'), 'file');
    await expect(resolveThreadFile(filesDir, '/attachments/f.txt')).rejects.toThrow(/"\/attachments\/f.txt".*symbolic link/);
  });
});
