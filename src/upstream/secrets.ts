/**
 * What upstream servers are started with that must never be shown: values
 * that came from `${env:...}`, credential headers and credential-looking env
 * entries. They are replaced in every description, result, error and log
 * line that comes from an upstream server (and registered with the process
 * logger, which redacts any line).
 */
import { hideInLogs, secretForms } from '../log.js';

export const REDACTED = '[redacted secret]';

/** Header names whose values are credentials. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$|token|secret|key|auth|password|session/i;
/** Env names whose values are credentials. */
const SECRET_ENV = /token|secret|key|password|passwd|pat$|^pat_|auth|credential|cookie|session|private/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name);
}

export function isSecretEnv(name: string): boolean {
  return SECRET_ENV.test(name);
}

export class UpstreamSecrets {
  private forms: string[] = [];
  private readonly values = new Set<string>();

  add(value: string): void {
    // Short values would redact ordinary words.
    if (value.length < 4 || this.values.has(value)) return;
    this.values.add(value);
    hideInLogs(value);
    this.forms = [...new Set([...this.forms, ...secretForms(value)])].sort((a, b) => b.length - a.length);
    // "Bearer abc": the token alone is just as secret.
    const scheme = /^(bearer|basic|token)\s+(\S{4,})$/i.exec(value);
    if (scheme?.[2]) this.add(scheme[2]);
  }

  get size(): number {
    return this.values.size;
  }

  /** Every secret, for a caller that keeps its own redactor. */
  list(): string[] {
    return [...this.values];
  }

  text(value: string): string {
    let out = value;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /** Every string inside a JSON-like value, redacted. */
  deep<T>(value: T): T {
    if (this.values.size === 0) return value;
    if (typeof value === 'string') return this.text(value) as T;
    if (Array.isArray(value)) return value.map((item) => this.deep(item)) as T;
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) out[key] = this.deep(inner);
      return out as T;
    }
    return value;
  }
}
