/**
 * Secret values (variables declared `type: 'secret'`) must never reach a model,
 * a result, an error message or a log line. Everything that crosses one of
 * those boundaries goes through a redactor first.
 */
import { hideInLogs, secretForms } from '../../log.js';

const REDACTED = '[redacted secret]';

export class Redactor {
  private readonly secrets = new Set<string>();
  /** Every form to replace, longest first, so a secret inside another never leaves a tail. */
  private forms: string[] = [];

  add(value: string): void {
    // Values under 4 characters would redact ordinary text; they are not worth hiding.
    if (value.length < 4 || this.secrets.has(value)) return;
    this.secrets.add(value);
    hideInLogs(value);
    // JSON-escaped and URL-encoded forms too: a secret inside JSON text or a URL.
    this.forms = [...new Set([...this.forms, ...secretForms(value)])].sort((a, b) => b.length - a.length);
  }

  /** A redactor that also knows this one's secrets (for child runs). */
  child(): Redactor {
    const child = new Redactor();
    for (const secret of this.secrets) child.add(secret);
    return child;
  }

  text(value: string): string {
    let out = value;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /** An error with its message redacted (the same error when there is nothing to hide). */
  error(error: unknown): unknown {
    if (!(error instanceof Error)) return typeof error === 'string' ? this.text(error) : error;
    const message = this.text(error.message);
    if (message !== error.message) error.message = message;
    if (error.stack) error.stack = this.text(error.stack);
    return error;
  }

  /** Redacts every string inside a JSON-like value. */
  deep<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    if (typeof value === 'string') return this.text(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.deep(item)) as T;
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) out[key] = this.deep(inner);
      return out as T;
    }
    return value;
  }
}
