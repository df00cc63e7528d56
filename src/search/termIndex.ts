/**
 * The inverted index: MiniSearch keeps the term dictionary (a radix tree, so
 * prefix lookups are cheap), the per-field postings and the field-length
 * statistics BM25 needs, and updates them incrementally on add/remove.
 *
 * Scoring does not go through `MiniSearch#search`: that path builds a result
 * object with match details for every matching document and sorts them all,
 * which made natural-language queries cost ~20 ms at 10,000 tools. The ranker
 * reads the same postings and accumulates BM25+ into reused typed arrays.
 * The postings are MiniSearch's protected state, read through this subclass;
 * the dependency is pinned to an exact version and the search tests exercise
 * every accessor.
 */
import MiniSearch, { type AsPlainObject } from 'minisearch';
import { FIELD_NAMES, type ToolDocument } from './document.js';
import { tokenize } from './tokenize.js';

/** Postings of one term: field id -> (document short id -> term frequency). */
export type TermPostings = ReadonlyMap<number, ReadonlyMap<number, number>>;

/** The field id of `name` (its position in {@link FIELD_NAMES}). */
export const NAME_FIELD_ID = FIELD_NAMES.indexOf('name');

function tokenizeField(text: string, fieldName?: string): string[] {
  // Names keep stop words so that `+to` can require the `to` of convert_to_pdf.
  return tokenize(text, fieldName === 'name');
}

function keepTerm(term: string): string {
  // Terms arrive already normalized by tokenizeField.
  return term;
}

/** The number of indexed fields: the stride of {@link TermIndex.fieldLengths}. */
export const FIELD_COUNT = FIELD_NAMES.length;

const OPTIONS = {
  fields: [...FIELD_NAMES],
  idField: 'id',
  tokenize: tokenizeField,
  processTerm: keepTerm,
  // Documents are removed with `remove` (postings cleaned at once), never
  // `discard`, so there is no dirt to vacuum and document frequencies stay exact.
  autoVacuum: false,
};

/** MiniSearch holding {@link ToolDocument}s, with read access to its postings. */
export class TermIndex extends MiniSearch<ToolDocument> {
  /**
   * Field lengths by `shortId * FIELD_COUNT + fieldId`, mirrored from
   * MiniSearch's per-document Map: scoring reads one per posting, and a typed
   * array read is several times cheaper than a Map lookup there.
   */
  private lengths = new Float64Array(0);

  /** Term -> its postings, in front of the radix tree while documents are added. */
  private readonly postingsByTerm = new Map<string, Map<number, Map<number, number>>>();

  constructor() {
    super(OPTIONS);
    // Building the index is mostly MiniSearch walking its radix tree once per
    // term occurrence. Most terms recur across tools, so a Map from term to
    // its postings skips the walk for every occurrence after the first. The
    // postings objects are the tree's own, so searches see the same data.
    // MiniSearch declares addTerm private: hence an assignment, not an override.
    (this as unknown as { addTerm: (fieldId: number, documentId: number, term: string) => void }).addTerm = (fieldId, documentId, term) => {
      let postings = this.postingsByTerm.get(term);
      if (postings === undefined) {
        postings = this._index.fetch(term, () => new Map());
        this.postingsByTerm.set(term, postings);
      }
      const documents = postings.get(fieldId);
      if (documents === undefined) postings.set(fieldId, new Map([[documentId, 1]]));
      else documents.set(documentId, (documents.get(documentId) ?? 0) + 1);
    };
  }

  override remove(document: ToolDocument): void {
    // Removing can drop terms from the tree; the Map must not keep detached postings.
    this.postingsByTerm.clear();
    super.remove(document);
  }

  override add(document: ToolDocument): void {
    super.add(document);
    const shortId = this._idToShortId.get(document.id);
    const lengths = shortId === undefined ? undefined : this._fieldLength.get(shortId);
    if (shortId === undefined || lengths === undefined) return;
    const end = (shortId + 1) * FIELD_COUNT;
    if (this.lengths.length < end) {
      const grown = new Float64Array(Math.max(end, this.lengths.length * 2, 64 * FIELD_COUNT));
      grown.set(this.lengths);
      this.lengths = grown;
    }
    for (let field = 0; field < FIELD_COUNT; field++) this.lengths[shortId * FIELD_COUNT + field] = lengths[field] ?? 0;
  }

  /**
   * An index saved with `toJSON`: MiniSearch restores its own state (several
   * times faster than adding the documents again), moved into a TermIndex.
   */
  static restore(saved: AsPlainObject): TermIndex {
    const plain = MiniSearch.loadJS<ToolDocument>(saved, OPTIONS) as TermIndex;
    const index = new TermIndex();
    index._documentCount = plain._documentCount;
    index._nextId = plain._nextId;
    index._documentIds = plain._documentIds;
    index._idToShortId = plain._idToShortId;
    index._fieldIds = plain._fieldIds;
    index._fieldLength = plain._fieldLength;
    index._avgFieldLength = plain._avgFieldLength;
    index._storedFields = plain._storedFields;
    index._dirtCount = plain._dirtCount;
    index._index = plain._index;
    index.lengths = new Float64Array(Math.max(index._nextId, 64) * FIELD_COUNT);
    for (const [shortId, lengths] of index._fieldLength) {
      for (let field = 0; field < FIELD_COUNT; field++) index.lengths[shortId * FIELD_COUNT + field] = lengths[field] ?? 0;
    }
    return index;
  }

  /** The short id MiniSearch gave a document, or `undefined`. */
  shortIdOf(id: string): number | undefined {
    return this._idToShortId.get(id);
  }

  /** The document id (tool name) of a short id, or `undefined` once removed. */
  idOf(shortId: number): string | undefined {
    return this._documentIds.get(shortId) as string | undefined;
  }

  /** One more than the largest short id ever given: the size of per-document arrays. */
  get shortIdLimit(): number {
    return this._nextId;
  }

  /** The postings of an exact term, or `undefined` if no document has it. */
  postings(term: string): TermPostings | undefined {
    return this._index.get(term);
  }

  /**
   * Calls `visit` for every indexed term that starts with `prefix` and is at
   * most `maxExtra` characters longer, the exact term included.
   */
  forEachTermWithPrefix(prefix: string, maxExtra: number, visit: (term: string, postings: TermPostings) => void): void {
    for (const [term, postings] of this._index.atPrefix(prefix)) {
      if (term.length - prefix.length <= maxExtra) visit(term, postings);
    }
  }

  /**
   * The number of unique terms each document has in each field (BM25's field
   * length), at `shortId * FIELD_COUNT + fieldId`. Read-only for callers; the
   * array is replaced when it grows, so read it again after adding documents.
   */
  get fieldLengths(): Float64Array {
    return this.lengths;
  }

  /** Average of {@link fieldLength} over the indexed documents. */
  averageFieldLength(fieldId: number): number {
    return this._avgFieldLength[fieldId] ?? 0;
  }
}
