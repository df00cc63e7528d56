import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentportError } from '../../src/errors.js';
import { SECRET_KEY_ENV, decryptSecret, encryptSecret, loadSecretKey, parseSecretKey } from '../../src/store/secretKey.js';

function catchError(fn: () => unknown): AgentportError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentportError);
    return err as AgentportError;
  }
  throw new Error('expected an error');
}

describe('parseSecretKey', () => {
  const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7));

  it('accepts 64 hex characters and base64 (standard or URL-safe) of 32 bytes', () => {
    expect(parseSecretKey(raw.toString('hex'), 'k').equals(raw)).toBe(true);
    expect(parseSecretKey(raw.toString('hex').toUpperCase(), 'k').equals(raw)).toBe(true);
    expect(parseSecretKey(raw.toString('base64'), 'k').equals(raw)).toBe(true);
    expect(parseSecretKey(raw.toString('base64url'), 'k').equals(raw)).toBe(true);
    expect(parseSecretKey(`  ${raw.toString('hex')}\n`, 'k').equals(raw)).toBe(true);
  });

  it('[PR-16] refuses anything else, naming the source and not the value', () => {
    for (const bad of [
      '',
      'short',
      'ab'.repeat(31),
      'ab'.repeat(33),
      Buffer.alloc(16).toString('base64'),
      Buffer.alloc(33).toString('base64'),
      'zz'.repeat(32),
    ]) {
      const err = catchError(() => parseSecretKey(bad, `The environment variable ${SECRET_KEY_ENV}`));
      expect(err.code).toBe('SECRET_KEY_INVALID');
      expect(err.message).toContain(SECRET_KEY_ENV);
      if (bad.length > 0) expect(err.message).not.toContain(bad);
    }
  });
});

describe('loadSecretKey', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentport-key-'));
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('prefers AGENTPORT_SECRET_KEY', async () => {
    const key = await loadSecretKey(dir, { [SECRET_KEY_ENV]: '11'.repeat(32) });
    expect(key.equals(Buffer.alloc(32, 0x11))).toBe(true);
    await expect(stat(path.join(dir, 'secret.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('[PR-16] rejects an invalid AGENTPORT_SECRET_KEY with an error naming the variable', async () => {
    await expect(loadSecretKey(dir, { [SECRET_KEY_ENV]: 'nope' })).rejects.toMatchObject({
      code: 'SECRET_KEY_INVALID',
      message: expect.stringContaining(SECRET_KEY_ENV),
    });
  });

  it('[PR-16] generates secret.key once with mode 0600 and reuses it, even when asked concurrently', async () => {
    const sub = path.join(dir, 'not-yet');
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadSecretKey(sub, {})));
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
    const file = path.join(sub, 'secret.key');
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'hex').equals(keys[0]!)).toBe(true);
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await loadSecretKey(sub, {})).equals(keys[0]!)).toBe(true);
  });

  it('[PR-16] refuses a damaged key file, naming it by its name to the caller and by its full path in the log', async () => {
    await writeFile(path.join(dir, 'secret.key'), 'garbage', { mode: 0o600 });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const error = await loadSecretKey(dir, {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'SECRET_KEY_INVALID', message: expect.stringContaining('secret.key') });
      // The message reaches clients and the model: no host path of the server's folders in it.
      expect((error as Error).message).not.toContain(dir);
      expect(stderr.mock.calls.map(([line]) => String(line)).join('')).toContain(path.join(dir, 'secret.key'));
    } finally {
      stderr.mockRestore();
    }
  });

  it('reports a key file the system cannot read with its error code, not its host path', async () => {
    // A folder where the key file should be: reading it fails (EISDIR) as a refused read would.
    await mkdir(path.join(dir, 'secret.key'));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const error = await loadSecretKey(dir, {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'INTERNAL', data: { errno: 'EISDIR' }, message: expect.stringContaining('secret.key') });
      expect((error as Error).message).not.toContain(dir);
      expect(stderr.mock.calls.map(([line]) => String(line)).join('')).toContain(path.join(dir, 'secret.key'));
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('encryptSecret / decryptSecret', () => {
  const key = Buffer.alloc(32, 3);

  it('round-trips with a random IV each time', () => {
    const a = encryptSecret(key, 'hello', 'ctx');
    const b = encryptSecret(key, 'hello', 'ctx');
    expect(a.iv).not.toBe(b.iv);
    expect(Buffer.from(a.iv, 'base64')).toHaveLength(12);
    expect(decryptSecret(key, a, 'ctx')).toBe('hello');
    expect(decryptSecret(key, b, 'ctx')).toBe('hello');
  });

  it('fails on a wrong key, another context, altered data or a truncated tag', () => {
    const enc = encryptSecret(key, 'hello', 'ctx');
    expect(catchError(() => decryptSecret(Buffer.alloc(32, 4), enc, 'ctx')).code).toBe('SECRET_DECRYPT_FAILED');
    expect(catchError(() => decryptSecret(key, enc, 'other')).code).toBe('SECRET_DECRYPT_FAILED');
    const data = Buffer.from(enc.data, 'base64');
    data[0] = data[0]! ^ 1;
    expect(catchError(() => decryptSecret(key, { ...enc, data: data.toString('base64') }, 'ctx')).code).toBe('SECRET_DECRYPT_FAILED');
    const shortTag = Buffer.from(enc.tag, 'base64').subarray(0, 4).toString('base64');
    expect(catchError(() => decryptSecret(key, { ...enc, tag: shortTag }, 'ctx')).code).toBe('SECRET_DECRYPT_FAILED');
  });
});
