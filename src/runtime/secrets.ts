/**
 * Secret values (variables declared `type: 'secret'`) must never reach a model,
 * a result, an error message or a log line. Everything that crosses one of
 * those boundaries goes through a redactor first.
 */
export const REDACTED = '[redacted secret]';

export class Redactor {
  private readonly secrets = new Set<string>();

  add(value: string): void {
    // Very short values would redact ordinary text; they are not worth hiding.
    if (value.length >= 4) this.secrets.add(value);
  }

  /** A redactor that also knows this one's secrets (for child runs). */
  child(): Redactor {
    const child = new Redactor();
    for (const secret of this.secrets) child.add(secret);
    return child;
  }

  text(value: string): string {
    let out = value;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** Redacts every string inside a JSON-like value. */
  deep<T>(value: T): T {
    if (this.secrets.size === 0) return value;
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
