/**
 * The key that encrypts secret variables at rest, and the AES-256-GCM helpers that use it.
 *
 * The key comes from `AGENTPORT_SECRET_KEY` when set, otherwise from `<dir>/secret.key`, which is
 * generated on first use with mode 0600 and reused afterwards. Error messages name where the
 * key came from, never the key itself (PR-16). They reach clients and the model too, so the key
 * file is named there by its name only; the line written to stderr for the operator has its full path.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError, errorMessage, isAgentportError } from '../errors.js';
import { errnoCode, warn } from './internal.js';

/** Name of the environment variable that may hold the key. */
export const SECRET_KEY_ENV = 'AGENTPORT_SECRET_KEY';

/** File name of the generated key inside the store's directory. */
const SECRET_KEY_FILE = 'secret.key';

/**
 * Where a store's key comes from, for messages (SECRET_DECRYPT_FAILED): by the key file's name, never its host path,
 * since they reach clients and the model.
 */
export function keySourceOf(given: boolean): string {
  return given ? 'the secretKey given to the store' : `${SECRET_KEY_ENV} or the store's ${SECRET_KEY_FILE}`;
}

/** Key length for AES-256. */
export const SECRET_KEY_BYTES = 32;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one `=` of padding; accept the URL-safe alphabet too.
const BASE64_KEY = /^(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?$/;

/**
 * Parses a key given as 64 hex characters or as base64 of 32 bytes (surrounding whitespace
 * ignored). `source` names where the text came from, for the error message.
 *
 * @throws AgentportError `SECRET_KEY_INVALID` naming `source`, without the text.
 */
export function parseSecretKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  if (HEX_KEY.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (BASE64_KEY.test(trimmed)) {
    const key = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
    if (key.length === SECRET_KEY_BYTES) return key;
  }
  throw new AgentportError(
    'SECRET_KEY_INVALID',
    `${source} must hold a 32-byte key as 64 hex characters or base64 (generate one with: openssl rand -hex 32)`,
  );
}

/**
 * Returns the secret key: from `AGENTPORT_SECRET_KEY` when it is set and non-empty, otherwise
 * from `<dir>/secret.key`, creating that file (mode 0600, directory 0700 when created) if missing.
 *
 * @param dir the store's root directory.
 * @param env environment to read; `process.env` by default.
 * @throws AgentportError `SECRET_KEY_INVALID` when the variable or the file holds no valid key.
 */
export async function loadSecretKey(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  const fromEnv = env[SECRET_KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    return parseSecretKey(fromEnv, `The environment variable ${SECRET_KEY_ENV}`);
  }
  const file = path.join(dir, SECRET_KEY_FILE);
  try {
    return await loadOrCreateKeyFile(file);
  } catch (error) {
    if (isAgentportError(error)) throw error;
    // Node's message quotes the host path: the operator gets it on stderr, the caller the system's code.
    const code = errnoCode(error);
    warn(`cannot read or create the secret key file ${file}: ${errorMessage(error)}`);
    throw new AgentportError(
      'INTERNAL',
      `cannot read or create the secret key file ${SECRET_KEY_FILE} of the store (${code ?? 'an unexpected error'}; the server's log names the file)`,
      code === undefined ? undefined : { errno: code },
      { cause: error },
    );
  }
}

async function readKeyFile(file: string): Promise<Buffer> {
  const text = await readFile(file, 'utf8');
  let key: Buffer;
  try {
    key = parseSecretKey(text, `The key file ${SECRET_KEY_FILE} of the store`);
  } catch (error) {
    warn(`the key file ${file} holds no valid key`);
    throw error;
  }
  if (process.platform !== 'win32') {
    const { mode } = await stat(file);
    // Not fatal: the user may have reasons, but a world-readable key defeats encryption at rest.
    if ((mode & 0o077) !== 0) {
      process.stderr.write(
        `agentport: warning: the key file ${file} is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it\n`,
      );
    }
  }
  return key;
}

async function loadOrCreateKeyFile(file: string): Promise<Buffer> {
  try {
    return await readKeyFile(file);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err;
  }

  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(SECRET_KEY_BYTES);
  // Write the whole key to a private temp file, then hard-link it into place: link() fails if
  // the key file appeared meanwhile (another process), so nobody ever reads a half-written key
  // and an existing key is never replaced (that would make stored secrets undecryptable).
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(tmp, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    // The umask can only remove bits, but make the mode exact anyway.
    await chmod(tmp, 0o600);
    try {
      await link(tmp, file);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'EEXIST') return await readKeyFile(file);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
      // File systems without hard links: an exclusive copy still never replaces a key.
      try {
        await copyFile(tmp, file, constants.COPYFILE_EXCL);
      } catch (copyErr) {
        if (errnoCode(copyErr) === 'EEXIST') return await readKeyFile(file);
        throw copyErr;
      }
      await chmod(file, 0o600);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  process.stderr.write(
    `agentport: created the secret key file ${file}; keep it (secret variables stored with it cannot be read without it)\n`,
  );
  return key;
}

/** A secret value encrypted with AES-256-GCM; binary fields are base64. */
export interface EncryptedValue {
  alg: 'aes-256-gcm';
  /** 12-byte random IV, fresh for every encryption. */
  iv: string;
  /** 16-byte authentication tag. */
  tag: string;
  data: string;
}

function checkKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== SECRET_KEY_BYTES) {
    throw new AgentportError('SECRET_KEY_INVALID', `The secret key must be ${SECRET_KEY_BYTES} bytes`);
  }
}

/**
 * Encrypts `plaintext` with a fresh random IV. `aad` (authenticated, not stored) binds the
 * ciphertext to its context, so a value copied under another name or thread fails to decrypt.
 */
export function encryptSecret(key: Buffer, plaintext: string, aad: string): EncryptedValue {
  checkKey(key);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { alg: 'aes-256-gcm', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/**
 * Decrypts a value from {@link encryptSecret} given the same `aad`.
 *
 * @throws AgentportError `SECRET_DECRYPT_FAILED` when the key is wrong or the value was altered.
 */
export function decryptSecret(key: Buffer, value: EncryptedValue, aad: string): string {
  checkKey(key);
  try {
    if (value.alg !== 'aes-256-gcm') throw new Error(`unknown algorithm ${String(value.alg)}`);
    // A fixed tag length refuses truncated tags, which would weaken authentication.
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(value.iv, 'base64'), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(value.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(value.data, 'base64')), decipher.final()]).toString('utf8');
  } catch (err) {
    throw new AgentportError('SECRET_DECRYPT_FAILED', 'cannot decrypt a secret value: wrong key or altered data', undefined, {
      cause: err,
    });
  }
}

/** Whether a parsed value has the shape of an {@link EncryptedValue}. */
export function isEncryptedValue(value: unknown): value is EncryptedValue {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.alg === 'aes-256-gcm' && typeof v.iv === 'string' && typeof v.tag === 'string' && typeof v.data === 'string';
}
