/**
 * Splitting a `.prompty` file into YAML frontmatter and markdown body, and parsing the frontmatter
 * with line tracking and load-time replacement constructs.
 */
import { isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visitAsync, type Document, type Node } from 'yaml';
import { codeFrame } from '../definitions/codeFrame.js';
import type { IssueCollector } from './errors.js';
import type { FieldPath } from './inputs.js';
import { replaceLoadTime, type ReplacementContext } from './replacements.js';

/** The two halves of a `.prompty` file. Line numbers are 1-based file lines. */
export interface SplitFile {
  /** YAML text between the `---` lines; null when the file has no frontmatter. */
  frontmatter: string | null;
  /** File line of the first frontmatter line. */
  frontmatterLine: number;
  body: string;
  /** File line of the first body line. */
  bodyLine: number;
}

const FENCE_RE = /^---[ \t]*$/;

/**
 * Splits file text (BOM and CRLF already removed) at its frontmatter fences.
 * @returns the halves, or an error message when the frontmatter is not closed.
 */
export function splitFrontmatter(text: string): SplitFile | { error: string } {
  const lines = text.split('\n');
  if (!FENCE_RE.test(lines[0] ?? '')) return { frontmatter: null, frontmatterLine: 1, body: text, bodyLine: 1 };
  const close = lines.findIndex((line, i) => i > 0 && FENCE_RE.test(line));
  if (close === -1) return { error: 'the frontmatter opened by "---" on line 1 is not closed by a "---" line' };
  return {
    frontmatter: lines.slice(1, close).join('\n'),
    frontmatterLine: 2,
    body: lines.slice(close + 1).join('\n'),
    bodyLine: close + 2,
  };
}

/** Parsed frontmatter with a way to find the file line of any field. */
export interface ParsedFrontmatter {
  data: Record<string, unknown>;
  /** File line of the node at `path` (or of its nearest located ancestor). */
  lineOf(path: FieldPath): number | undefined;
  /** The text written at `path` when it held a `${...}` construct (before it was resolved). */
  rawOf(path: FieldPath): string | undefined;
}

/** Formats a field path as `inputs[0].type`. */
export function fieldName(path: FieldPath): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc === '' ? p : `${acc}.${p}`), '');
}

/**
 * Parses frontmatter YAML, resolving `${env:}` and `${file:}` in every scalar value (a scalar that is
 * exactly `${file:x}` becomes the file's parsed value). Problems go to `issues`.
 * @returns null when the YAML itself is invalid or not a mapping.
 */
export async function parseFrontmatter(
  yamlText: string,
  firstLine: number,
  ctx: ReplacementContext,
  issues: IssueCollector,
): Promise<ParsedFrontmatter | null> {
  const counter = new LineCounter();
  const doc: Document = parseDocument(yamlText, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  const toFileLine = (offset: number): number => counter.linePos(offset).line + firstLine - 1;
  if (doc.errors.length > 0) {
    // One message: the first error (the rest usually follow from it), at its file line, with a code frame.
    const err = doc.errors[0]!;
    const position = err.linePos?.[0];
    const what = (err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?$/, '');
    const line = position ? position.line + firstLine - 1 : undefined;
    const frame = position && line !== undefined ? codeFrame(yamlText, line, position.col, { firstLine }) : '';
    issues.error({
      ...(line !== undefined ? { line } : {}),
      message: `invalid YAML in frontmatter: ${what}${position ? ` (column ${position.col})` : ''}${frame ? `\n${frame}` : ''}`,
    });
    return null;
  }

  const raws = new Map<string, string>();
  await visitAsync(doc, {
    Scalar: async (key, node, path) => {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return undefined;
      const line = node.range ? toFileLine(node.range[0]) : undefined;
      const at = line !== undefined ? { line } : {};
      const field = fieldName(pathOf(path, key === 'key' ? null : node));
      if (key !== 'key') raws.set(field, node.value);
      if (node.value.includes('${params:')) {
        issues.warn({ ...at, field, message: '${params:...} is only resolved in the body; left as written' });
      }
      const result = await replaceLoadTime(node.value, ctx, key !== 'key');
      for (const e of result.errors) issues.error({ ...at, field, message: e.message });
      if (typeof result.value === 'string') {
        node.value = result.value;
        return undefined;
      }
      const replacement = doc.createNode(result.value);
      // Keep the original position so problems inside hoisted values still point at this line.
      replacement.range = node.range ?? null;
      return replacement;
    },
  });

  const data: unknown = doc.toJS();
  if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) {
    issues.error({ line: firstLine, message: 'the frontmatter must be a YAML mapping of fields' });
    return null;
  }
  return {
    data: (data ?? {}) as Record<string, unknown>,
    lineOf(fieldPath: FieldPath): number | undefined {
      for (let n = fieldPath.length; n >= 0; n -= 1) {
        const node: unknown = n === 0 ? doc.contents : doc.getIn(fieldPath.slice(0, n), true);
        if (isNode(node) && node.range) return toFileLine(node.range[0]);
      }
      return undefined;
    },
    rawOf(fieldPath: FieldPath): string | undefined {
      return raws.get(fieldName(fieldPath));
    },
  };
}

/** The field path of a visited node, from the visitor's ancestor list. */
function pathOf(ancestors: readonly unknown[], self: Node | null): FieldPath {
  const out: FieldPath = [];
  for (let i = 1; i < ancestors.length; i += 1) {
    const a = ancestors[i];
    const child = i + 1 < ancestors.length ? ancestors[i + 1] : self;
    if (isPair(a)) out.push(isScalar(a.key) ? String(a.key.value) : String(a.key));
    else if (isSeq(a) && child) out.push(a.items.indexOf(child));
  }
  return out;
}
