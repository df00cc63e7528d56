/**
 * SHA-256 for the few places a start may need one. node:crypto is loaded with the first digest: loading it costs a
 * start a few milliseconds that most starts never need.
 */
import { createRequire } from 'node:module';

let nodeCrypto: typeof import('node:crypto') | undefined;

/** The hex SHA-256 digest of `text` (UTF-8). */
export function sha256Hex(text: string): string {
  nodeCrypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return nodeCrypto.createHash('sha256').update(text).digest('hex');
}
