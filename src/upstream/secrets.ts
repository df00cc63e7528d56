/**
 * What upstream servers are started with that must never be shown: values
 * that came from `${env:...}`, credential headers and credential-looking env
 * entries. They are replaced in every description, result, error and log
 * line that comes from an upstream server (and registered with the process
 * logger, which redacts any line).
 */
import { Redactor } from '../runtime/variables/secrets.js';

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

/** The runtime's redactor, which also takes the token out of an `Authorization`-style value. */
export class UpstreamSecrets {
  private readonly values = new Set<string>();
  private readonly redactor = new Redactor();

  add(value: string): void {
    // Short values would redact ordinary words (the redactor skips them too).
    if (value.length < 4 || this.values.has(value)) return;
    this.values.add(value);
    this.redactor.add(value);
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
    return this.redactor.text(value);
  }

  /** Every string inside a JSON-like value, redacted. */
  deep<T>(value: T): T {
    return this.redactor.deep(value);
  }
}
