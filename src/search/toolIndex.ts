/**
 * The deferred tool search engine: a set of tools, indexed once and updated in
 * place, answering the query language of query.ts.
 */
import { clauseTerms } from './clauses.js';
import { toolDocument, type ToolDocument } from './document.js';
import { parseQuery } from './query.js';
import { Ranker, type RankingOptions } from './ranker.js';
import { packIndex, unpackIndex } from './savedIndex.js';
import { TermIndex } from './termIndex.js';
import { requiredWordSets } from './tokenize.js';
import { DEFAULT_MAX_RESULTS, type SearchOptions, type SearchOutcome, type SearchableTool } from './types.js';

/** Rebuild when short ids outnumber tools by this factor (and by MIN_SPARSE_IDS). */
const SPARSE_FACTOR = 4;
const MIN_SPARSE_IDS = 4096;

/** Options of a {@link ToolSearchIndex}; the defaults are the measured best. */
export type ToolSearchIndexOptions = RankingOptions;

/**
 * Searchable tools. Adding or removing tools updates the index in place. The
 * one exception: per-document arrays are sized by MiniSearch's short ids,
 * which are never reused, so after heavy churn (ids more than
 * {@link SPARSE_FACTOR} times the tool count) the index is rebuilt once from
 * the stored documents to keep memory proportional to the tools.
 *
 * ```ts
 * const index = new ToolSearchIndex(tools);
 * const outcome = index.search('+slack send message', { maxResults: 5 });
 * const text = formatSearchOutcome(outcome);
 * ```
 */
export class ToolSearchIndex {
  /**
   * Each tool with the document indexed for it. MiniSearch removes a document
   * by tokenizing it again, so removal needs that exact text, even if the
   * caller has since mutated the tool object. A restored index's tools have
   * none until one is needed (see {@link restore}).
   */
  private readonly entries = new Map<string, { readonly tool: SearchableTool; document: ToolDocument | undefined }>();
  /** Lowercased name -> names, for the case-insensitive fallback of `select:` and exact-name queries. */
  private readonly byLowerName = new Map<string, string[]>();
  private terms: TermIndex;
  private ranker: Ranker;

  constructor(
    tools: Iterable<SearchableTool> = [],
    private readonly options: ToolSearchIndexOptions = {},
  ) {
    this.terms = new TermIndex();
    this.ranker = new Ranker(this.terms, (doc) => this.nameOfDoc(doc), options);
    this.add(tools);
  }

  /**
   * The index as bytes, to be given back to {@link restore} with the same
   * tools (a start-up cache saves it: restoring takes a small part of the
   * time indexing the tools again does).
   */
  save(): Uint8Array {
    const { header, arrays } = this.terms.save();
    return packIndex({ header: { ...header, format: SAVED_FORMAT, names: this.names() }, arrays });
  }

  /**
   * The index `saved` holds, over `tools`; undefined when there is none, or it
   * was saved from other tools (by name) or in another format, to be built
   * again instead. The tools are indexed as they were saved: each one's
   * document is made from it only when it is removed, so they must not have
   * changed since.
   */
  static restore(
    saved: Uint8Array | undefined,
    tools: readonly SearchableTool[],
    options: ToolSearchIndexOptions = {},
  ): ToolSearchIndex | undefined {
    const parts = saved && unpackIndex(saved);
    const names = parts?.header.names;
    if (!parts || parts.header.format !== SAVED_FORMAT || !Array.isArray(names) || names.length !== tools.length) return undefined;
    let terms: TermIndex;
    try {
      terms = TermIndex.restore(parts);
    } catch {
      return undefined;
    }
    if (terms.documentCount !== tools.length) return undefined;
    for (const [i, tool] of tools.entries()) {
      if (tool.name !== names[i] || terms.shortIdOf(tool.name) === undefined) return undefined;
    }
    const index = new ToolSearchIndex([], options);
    index.terms = terms;
    index.ranker = new Ranker(terms, (doc) => index.nameOfDoc(doc), options);
    for (const tool of tools) index.keep(tool, undefined);
    return index;
  }

  /** The number of tools. */
  get size(): number {
    return this.entries.size;
  }

  /** Tool names in the order the tools were added (a replaced tool counts as added last). */
  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The tool object as given to {@link add}. */
  get(name: string): SearchableTool | undefined {
    return this.entries.get(name)?.tool;
  }

  /** Adds tools; a tool whose name is already indexed replaces the old one. */
  add(tools: Iterable<SearchableTool>): void {
    for (const tool of tools) {
      if (typeof tool.name !== 'string' || tool.name === '') {
        throw new TypeError('ToolSearchIndex.add: every tool needs a non-empty string name');
      }
      if (this.entries.has(tool.name)) this.remove([tool.name]);
      const document = toolDocument(tool);
      this.terms.add(document);
      this.keep(tool, document);
    }
  }

  /** Keeps an indexed tool and finds it by its name in any case. */
  private keep(tool: SearchableTool, document: ToolDocument | undefined): void {
    this.entries.set(tool.name, { tool, document });
    const lower = tool.name.toLowerCase();
    const same = this.byLowerName.get(lower);
    if (same === undefined) this.byLowerName.set(lower, [tool.name]);
    else same.push(tool.name);
  }

  /** Removes tools by name; unknown names are ignored. Returns how many were removed. */
  remove(names: Iterable<string>): number {
    let removed = 0;
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry === undefined) continue;
      // `remove` (not `discard`) cleans the postings now, so document
      // frequencies stay exact without vacuuming.
      this.terms.remove(documentOf(entry));
      this.entries.delete(name);
      const lower = name.toLowerCase();
      const same = this.byLowerName.get(lower)?.filter((other) => other !== name) ?? [];
      if (same.length === 0) this.byLowerName.delete(lower);
      else this.byLowerName.set(lower, same);
      removed += 1;
    }
    if (this.terms.shortIdLimit > Math.max(MIN_SPARSE_IDS, SPARSE_FACTOR * this.entries.size)) this.compact();
    return removed;
  }

  /** Re-indexes the stored documents into a fresh MiniSearch with dense short ids. */
  private compact(): void {
    this.terms = new TermIndex();
    this.ranker = new Ranker(this.terms, (doc) => this.nameOfDoc(doc), this.options);
    for (const entry of this.entries.values()) this.terms.add(documentOf(entry));
  }

  /**
   * Runs a query (see query.ts for the language). Never throws on user input:
   * an unusable query gives an outcome with mode `invalid` and an `error`.
   */
  search(query: string, options: SearchOptions = {}): SearchOutcome {
    const parsed = parseQuery(query);
    switch (parsed.kind) {
      case 'invalid':
        return { query, mode: 'invalid', tools: [], unknown: [], required: [], error: parsed.error };
      case 'select':
        return this.select(query, parsed.names);
      case 'keywords':
        return this.keywords(query, parsed.text, parsed.required, maxResultsOf(options));
    }
  }

  private select(query: string, names: readonly string[]): SearchOutcome {
    const tools: SearchableTool[] = [];
    const unknown: string[] = [];
    const found = new Set<string>();
    for (const name of names) {
      const resolved = this.resolveName(name);
      if (resolved === undefined) unknown.push(name);
      else if (!found.has(resolved.name)) {
        found.add(resolved.name);
        tools.push(resolved);
      }
    }
    return { query, mode: 'select', tools, unknown, required: [] };
  }

  private keywords(query: string, text: string, required: readonly string[], maxResults: number): SearchOutcome {
    // A query that is exactly a tool's name returns that tool first.
    const exact = required.length === 0 ? this.resolveName(text) : undefined;
    // A +term with no words ("+--") requires nothing; it is ignored.
    const requiredTerms = required.map(requiredWordSets).filter((alternatives) => alternatives.length > 0);
    const limit = exact === undefined ? maxResults : maxResults - 1;
    const docs =
      limit === 0
        ? []
        : this.ranker.rank({
            clauses: clauseTerms(text),
            required: requiredTerms,
            limit,
            exclude: exact === undefined ? undefined : this.terms.shortIdOf(exact.name),
          });
    const tools: SearchableTool[] = exact === undefined ? [] : [exact];
    for (const doc of docs) {
      const tool = this.get(this.nameOfDoc(doc));
      if (tool !== undefined) tools.push(tool);
    }
    return { query, mode: 'keywords', tools, unknown: [], required };
  }

  /** The tool with exactly this name, else the first (by name) with the same name in another case. */
  private resolveName(name: string): SearchableTool | undefined {
    const exact = this.get(name);
    if (exact !== undefined) return exact;
    const others = this.byLowerName.get(name.toLowerCase());
    if (others === undefined || others.length === 0) return undefined;
    const first = others.reduce((a, b) => (b < a ? b : a));
    return this.get(first);
  }

  private nameOfDoc(doc: number): string {
    return this.terms.idOf(doc) ?? '';
  }
}

/** The saved form's version (the header's `format`), with the tool names in order beside the term index's own. */
const SAVED_FORMAT = 2;

/** The document an entry was indexed with; made from its tool (once) when restored without one. */
function documentOf(entry: { readonly tool: SearchableTool; document: ToolDocument | undefined }): ToolDocument {
  return (entry.document ??= toolDocument(entry.tool));
}

function maxResultsOf(options: SearchOptions): number {
  const wanted = options.maxResults;
  if (wanted === undefined || !Number.isFinite(wanted)) return DEFAULT_MAX_RESULTS;
  return Math.max(1, Math.floor(wanted));
}
