/**
 * The body's `tools:` section as tool references: what a render hands the runtime, and what the
 * section says before any call (so the registry can check names and bind the tools it defines).
 *
 * An entry is a registered tool's name, a `{name, ...config}` object, or a Prompty entry
 * `{id, type, options}`: the tool `id`, implemented by the registered tool named `type` (or by the
 * tool named `id` itself), configured by `options`.
 */
import { isNode, isSeq, LineCounter, parseDocument } from 'yaml';
import { sectionKind, templateScanOf } from './sections.js';
import type { LoadedPrompty } from './types.js';

/** A tool of the section: a name, or a config object that has a `name` (an `id` is copied there). */
export type PromptyToolEntry = string | (Record<string, unknown> & { name?: unknown });

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Gives `{id, ...}` entries a `name` (the id: the name the model sees and the runtime looks up) and
 * leaves out entries whose id is in `skip`.
 */
export function normalizeRenderedTools(
  entries: Array<string | Record<string, unknown>>,
  skip: ReadonlySet<string> | undefined,
): PromptyToolEntry[] {
  const out: PromptyToolEntry[] = [];
  for (const entry of entries) {
    if (typeof entry === 'string' || entry['name'] !== undefined) {
      out.push(entry);
      continue;
    }
    const id = String(entry['id']);
    if (skip?.has(id)) continue;
    out.push({ name: id, ...entry });
  }
  return out;
}

/** What a section entry says before rendering. A field holding template text is absent and `dynamic`. */
export interface StaticToolEntry {
  /** Position in the section's list. */
  index: number;
  /** 1-based file line of the entry. */
  line?: number;
  name?: string;
  id?: string;
  type?: string;
  description?: string;
  /** The entry has `options` (whose values may depend on the call). */
  hasOptions: boolean;
  /** The entry has `env` (which a body entry cannot apply; the registry warns). */
  hasEnv: boolean;
  /** A name, id or type comes from template values: only a call can tell what it is. */
  dynamic: boolean;
}

const PLACEHOLDER = '\u27e6dynamic\u27e7';
/** Tags that shape the text without printing a value: Jinja2 statements and comments, mustache sections and comments. */
const STATEMENT_RE = /\{%[\s\S]*?%\}|\{#[\s\S]*?#\}|\{\{\s*[#^/!][\s\S]*?\}\}/g;
/** Template tags and `${params:}`, the parts of a section that only a call fills in. */
const TAG_RE = /\{\{\{[\s\S]*?\}\}\}|\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}|\$\{params:[^}\n]*\}/g;

/**
 * The entries of a file's `tools:` section as written: lines holding only template statements
 * (loops, conditions, comments) are left out and values standing in tags become unknown.
 * @returns null when the file has no tools section, or when its YAML only makes sense rendered
 */
export function staticToolsSection(p: LoadedPrompty): StaticToolEntry[] | null {
  const scan = templateScanOf(p);
  const section = scan.sections[1];
  if (!section?.head || sectionKind(section.head) !== 'tools') return null;

  const kept: string[] = [];
  const templateLines: number[] = [];
  section.lines.forEach((line, i) => {
    // A line of statements or comments only shapes the list; the lines between them are entries.
    const withoutStatements = line.replace(STATEMENT_RE, '');
    if (withoutStatements !== line && withoutStatements.trim() === '') return;
    const tagged = withoutStatements.replace(TAG_RE, PLACEHOLDER);
    kept.push(tagged);
    templateLines.push(section.start + 1 + i);
  });

  const counter = new LineCounter();
  const doc = parseDocument(kept.join('\n'), { lineCounter: counter });
  if (doc.errors.length > 0) return null;
  const root = doc.contents;
  if (root === null) return [];
  const items: unknown[] = isSeq(root) ? root.items : [root];

  const entries: StaticToolEntry[] = [];
  items.forEach((item, index) => {
    const value: unknown = isNode(item) ? item.toJSON() : item;
    const range = isNode(item) ? item.range : undefined;
    const keptLine = range ? counter.linePos(range[0]).line - 1 : undefined;
    const templateLine = keptLine === undefined ? undefined : templateLines[keptLine];
    const line = templateLine === undefined ? undefined : p.templateSourceLines[templateLine];
    const entry: StaticToolEntry = { index, hasOptions: false, hasEnv: false, dynamic: false, ...(line !== undefined ? { line } : {}) };
    const text = (v: unknown, key: 'name' | 'id' | 'type' | 'description'): void => {
      if (typeof v !== 'string') return;
      if (v.includes(PLACEHOLDER)) {
        if (key !== 'description') entry.dynamic = true;
        return;
      }
      entry[key] = v.trim();
    };
    if (typeof value === 'string') {
      text(value, 'name');
    } else if (isRecord(value)) {
      text(value['name'], 'name');
      text(value['id'], 'id');
      text(value['type'], 'type');
      text(value['description'], 'description');
      entry.hasOptions = value['options'] !== undefined && value['options'] !== null;
      entry.hasEnv = value['env'] !== undefined && value['env'] !== null;
    }
    entries.push(entry);
  });
  return entries;
}
