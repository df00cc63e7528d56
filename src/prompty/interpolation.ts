/**
 * Injection-safe mustache rendering.
 *
 * Each render draws a random nonce. Before rendering, every real marker line of the template gets a
 * `⟦<nonce>m<line>⟧` prefix and every real media link a `⟦<nonce>i<line>⟧` prefix, so only
 * structure written in the template is recognized afterwards. While rendering, every interpolated
 * value (`{{x}}`, `{{{x}}}`, `{{&x}}`, `${params:x}`) is replaced by an opaque `⟦<nonce>v<k>⟧` token
 * and kept aside; tokens are turned back into values only once the structure has been parsed, so
 * input can never add a role marker, a media link, YAML structure or a mustache tag. Values are
 * never HTML-escaped, and the global mustache state is left untouched (a private Writer is used).
 */
import { randomBytes } from 'node:crypto';
import Mustache from 'mustache';

/** Per-render token factory and store of interpolated values. */
export class Interpolations {
  readonly nonce: string;
  private readonly values: unknown[] = [];
  private readonly valueRe: RegExp;

  constructor(nonce: string = randomBytes(9).toString('hex')) {
    this.nonce = nonce;
    this.valueRe = new RegExp(`⟦${nonce}v(\\d+)⟧`, 'g');
  }

  /** Marker-line prefix for template line `line`. */
  markerToken(line: number): string {
    return `⟦${this.nonce}m${line}⟧`;
  }

  /** Media-link prefix for template line `line`. */
  mediaToken(line: number): string {
    return `⟦${this.nonce}i${line}⟧`;
  }

  /** Placeholder for the `index`-th `${params:}` of a compiled template (jinja2; see jinja.ts). */
  paramToken(index: number): string {
    return `⟦${this.nonce}p${index}⟧`;
  }

  /** True when `text` holds any token of this nonce (structure or value). */
  hasTokens(text: string): boolean {
    return text.includes(`⟦${this.nonce}`);
  }

  /** Stores a value and returns the token standing for it. */
  hole(value: unknown): string {
    this.values.push(value);
    return `⟦${this.nonce}v${this.values.length - 1}⟧`;
  }

  /** True when `text` holds at least one value token. */
  hasHoles(text: string): boolean {
    return text.includes(`⟦${this.nonce}v`);
  }

  /** When `text` is exactly one value token, that value. */
  exact(text: string): { value: unknown } | null {
    const m = new RegExp(`^⟦${this.nonce}v(\\d+)⟧$`).exec(text);
    return m ? { value: this.values[Number(m[1])] } : null;
  }

  /** Replaces every value token in `text` by the value as text (objects as JSON). */
  fill(text: string): string {
    if (!this.hasHoles(text)) return text;
    return text.replace(this.valueRe, (_all, k: string) => valueText(this.values[Number(k)]));
  }

  /** Removes marker, media and parameter tokens left outside the places where they count. */
  stripStructureTokens(text: string): string {
    return text.replace(new RegExp(`⟦${this.nonce}[mip]\\d+⟧`, 'g'), '');
  }
}

/** How an interpolated value reads as text: strings as they are, objects and arrays as JSON. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/** A mustache Writer whose variable tags emit value tokens instead of (escaped) text. */
class TokenWriter extends Mustache.Writer {
  constructor(private readonly slots: Interpolations) {
    super();
  }

  private emit(token: string[], context: Mustache.Context): string {
    // Context.lookup is typed `any` by @types/mustache; the value is only stored, never executed.
    const value: unknown = context.lookup(token[1] ?? '');
    return value === null || value === undefined ? '' : this.slots.hole(value);
  }

  override escapedValue(token: string[], context: Mustache.Context): string {
    return this.emit(token, context);
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.emit(token, context);
  }
}

/** Renders `template` with `view`; every interpolated value becomes a token of `slots`. */
export function renderWithTokens(template: string, view: Record<string, unknown>, slots: Interpolations): string {
  // A new Writer per render: its parse cache dies with it, and nothing global is changed.
  return new TokenWriter(slots).render(template, view, {}, { escape: valueText });
}

/**
 * Checks mustache syntax; returns the 0-based offset and message of the first error, or null.
 */
export function mustacheSyntaxError(template: string): { offset: number; message: string } | null {
  try {
    new Mustache.Writer().parse(template);
    return null;
  } catch (err) {
    const raw = (err as Error).message;
    const at = /\s+at (\d+)$/.exec(raw);
    const message = at ? raw.slice(0, at.index) : raw;
    let offset = at ? Number(at[1]) : 0;
    // mustache reports an unclosed section at the end of the template; point at its opening tag.
    const unclosed = /^Unclosed section "(.*)"$/.exec(message);
    if (unclosed) {
      const name = (unclosed[1] ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const opens = [...template.matchAll(new RegExp(`\\{\\{\\s*[#^]\\s*${name}\\s*\\}\\}`, 'g'))];
      const lastOpen = opens[opens.length - 1];
      if (lastOpen) offset = lastOpen.index;
    }
    return { offset, message };
  }
}

/**
 * Makes JSON-like data out of call arguments: functions (which mustache would call and whose output
 * it would render) and symbols are dropped; cycles are cut.
 */
export function toData(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return undefined;
  if (value instanceof Date) return value.toISOString();
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    out = value.map((v) => toData(v, seen));
  } else {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const d = toData(v, seen);
      if (d !== undefined) obj[k] = d;
    }
    out = obj;
  }
  // Only ancestors count as a cycle; the same object may appear twice side by side.
  seen.delete(value);
  return out;
}
