/**
 * Member access (`a.b`, `a[k]`) in sandboxed jinja2 templates.
 *
 * nunjucks' own lookup returns any property, inherited ones included, so `"".constructor.constructor`
 * reaches `Function` and from there the process. Here a template sees only data: own properties of
 * plain objects and arrays, `length` of strings and lists, and a few of Jinja's string and dict
 * methods (Prompty templates are written for Python's Jinja2, where `name.upper()` or
 * `d.items()` work).
 */
import { nunjucks } from './nunjucksInternals.js';

type Method = (...args: unknown[]) => unknown;

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// Jinja's string conversion: objects print as JavaScript prints them, like everywhere else in a template.
// eslint-disable-next-line @typescript-eslint/no-base-to-string
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

function stripChars(s: string, chars: unknown, side: 'both' | 'start' | 'end'): string {
  if (chars === undefined || chars === null) {
    return side === 'both' ? s.trim() : side === 'start' ? s.trimStart() : s.trimEnd();
  }
  const set = new Set(str(chars));
  let start = 0;
  let end = s.length;
  if (side !== 'end') while (start < end && set.has(s[start] as string)) start += 1;
  if (side !== 'start') while (end > start && set.has(s[end - 1] as string)) end -= 1;
  return s.slice(start, end);
}

/** Python string methods as Jinja2 templates call them, bound to one string. */
function stringMethod(s: string, name: string): Method | undefined {
  switch (name) {
    case 'upper':
      return () => s.toUpperCase();
    case 'lower':
      return () => s.toLowerCase();
    case 'strip':
      return (chars) => stripChars(s, chars, 'both');
    case 'lstrip':
      return (chars) => stripChars(s, chars, 'start');
    case 'rstrip':
      return (chars) => stripChars(s, chars, 'end');
    case 'title':
      return () => s.toLowerCase().replace(/(^|[^A-Za-z])([a-z])/g, (_m, pre: string, c: string) => pre + c.toUpperCase());
    case 'capitalize':
      return () => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
    case 'startswith':
      return (prefix) => s.startsWith(str(prefix));
    case 'endswith':
      return (suffix) => s.endsWith(str(suffix));
    case 'replace':
      return (from, to) => s.split(str(from)).join(str(to));
    case 'split':
      return (sep) =>
        sep === undefined || sep === null
          ? s
              .trim()
              .split(/\s+/)
              .filter((p) => p !== '')
          : s.split(str(sep));
    case 'join':
      return (items) => (Array.isArray(items) ? items.map(str).join(s) : '');
    default:
      return undefined;
  }
}

/** Python dict methods as Jinja2 templates call them, bound to one record. */
function dictMethod(d: Record<string, unknown>, name: string): Method | undefined {
  switch (name) {
    case 'items':
      return () => Object.entries(d);
    case 'keys':
      return () => Object.keys(d);
    case 'values':
      return () => Object.values(d);
    case 'get':
      return (key, fallback) => (typeof key === 'string' && Object.hasOwn(d, key) ? d[key] : fallback);
    default:
      return undefined;
  }
}

function index(key: unknown, length: number): number | undefined {
  if (typeof key !== 'number' && !(typeof key === 'string' && /^-?\d+$/.test(key))) return undefined;
  const i = Number(key);
  // Python-style negative indexes count from the end.
  const at = i < 0 ? length + i : i;
  return Number.isInteger(at) && at >= 0 && at < length ? at : undefined;
}

/**
 * `target[key]` as a sandboxed template sees it; `undefined` for anything that is not data.
 * Functions found on plain objects (nunjucks' `cycler()`, `joiner()` results, macros stored in a
 * dict) are bound to their object, as nunjucks binds them.
 */
export function safeLookup(target: unknown, key: unknown): unknown {
  if (target === undefined || target === null) return undefined;
  const text = target instanceof nunjucks.runtime.SafeString ? target.toString() : target;
  if (typeof text === 'string') {
    if (key === 'length') return text.length;
    const at = index(key, text.length);
    if (at !== undefined) return text[at];
    return typeof key === 'string' ? stringMethod(text, key) : undefined;
  }
  if (Array.isArray(target)) {
    if (key === 'length') return target.length;
    const at = index(key, target.length);
    return at === undefined ? undefined : (target[at] as unknown);
  }
  if (isPlainRecord(target)) {
    if (typeof key !== 'string' && typeof key !== 'number') return undefined;
    const name = String(key);
    if (Object.hasOwn(target, name)) {
      const value = target[name];
      return typeof value === 'function' ? (value as Method).bind(target) : value;
    }
    return dictMethod(target, name);
  }
  return undefined;
}
