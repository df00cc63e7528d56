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
 * every accessor. A saved index is restored into the same state, its radix
 * tree made node by node in SearchableMap's own layout (see RadixNode).
 */
import MiniSearch from 'minisearch';
import type SearchableMap from 'minisearch/SearchableMap';
import { FIELD_NAMES, type ToolDocument } from './document.js';
import type { IndexParts } from './savedIndex.js';
import { tokenize } from './tokenize.js';

/** Postings of one term: field id -> (document short id -> term frequency). */
export type TermPostings = ReadonlyMap<number, ReadonlyMap<number, number>>;
type Postings = Map<number, Map<number, number>>;

/**
 * A node of MiniSearch's radix tree (SearchableMap's `_tree`): edge labels to child nodes, and under
 * {@link TREE_LEAF} the value of the term that ends at the node. A restored index's values are positions until decoded.
 */
type RadixNode = Map<string, RadixNode | Postings | number>;
/** The key under which a node holds its own term's value (MiniSearch's `LEAF`). */
const TREE_LEAF = '';

/**
 * A restored index's postings, as saved: term `i`'s are `postings[offsets[i]]` up to `postings[offsets[i + 1]]`,
 * runs of field id, document count, then (short id, frequency) pairs. The radix tree holds `i` for such a term until
 * its postings are decoded.
 */
interface SavedPostings {
  offsets: Int32Array;
  postings: Int32Array;
  /** Terms decoded so far, by position: searches read them from here, the tree keeps the position. */
  decoded: Map<number, Postings>;
}

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

  /** Postings not decoded yet, when restored (see {@link decodeAll}). */
  private saved: SavedPostings | undefined;

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
    this.decodeAll();
    // Removing can drop terms from the tree; the Map must not keep detached postings.
    this.postingsByTerm.clear();
    super.remove(document);
  }

  override add(document: ToolDocument): void {
    this.decodeAll();
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
   * The radix tree as a restored index fills it: a term's postings, or its position in the saved postings until
   * decoded. MiniSearch's own methods read only postings: every term is decoded before it runs one (add, remove).
   */
  private get tree(): SearchableMap<Postings | number> {
    return this._index as unknown as SearchableMap<Postings | number>;
  }

  /**
   * The index in the form {@link restore} takes: the document tables and every term's postings, as a header and
   * integer arrays (savedIndex.ts lays them out in bytes).
   */
  save(): IndexParts {
    const ids: string[] = [];
    const shortIds: number[] = [];
    const fieldLengths: number[] = [];
    for (const [shortId, id] of this._documentIds) {
      ids.push(id as string);
      shortIds.push(shortId);
      // From the mirror scoring reads: a restored index has no MiniSearch arrays until it changes (decodeAll).
      for (let field = 0; field < FIELD_COUNT; field++) fieldLengths.push(this.lengths[shortId * FIELD_COUNT + field]!);
    }
    // The radix tree as it is, node by node (see TREE_LEAF): restoring it is then making its Maps, not inserting
    // every term again (a walk down the tree per term, a third of a restore's time at 10,000 tools).
    const labels: string[] = [];
    const tree: number[] = [];
    const offsets: number[] = [0];
    const postings: number[] = [];
    const walk = (node: RadixNode) => {
      tree.push(node.size);
      for (const [label, child] of node) {
        if (label === TREE_LEAF) {
          tree.push(-1, offsets.length - 1);
          for (const [fieldId, documents] of this.postingsOf(child as Postings | number)!) {
            postings.push(fieldId, documents.size);
            for (const [shortId, frequency] of documents) postings.push(shortId, frequency);
          }
          offsets.push(postings.length);
        } else {
          tree.push(labels.push(label) - 1);
          walk(child as RadixNode);
        }
      }
    };
    walk(this.tree._tree);
    return {
      header: { documentCount: this._documentCount, nextId: this._nextId, averageFieldLength: this._avgFieldLength, ids, labels },
      arrays: [
        Int32Array.from(shortIds),
        Int32Array.from(fieldLengths),
        Int32Array.from(tree),
        Int32Array.from(offsets),
        Int32Array.from(postings),
      ],
    };
  }

  /**
   * An index saved with {@link save}. Only the tables and the term tree are built now; a term's postings are decoded
   * when a search first reads them, or all at once before the index changes. Throws when `saved` is not consistent.
   */
  static restore({ header, arrays }: IndexParts): TermIndex {
    const { documentCount, nextId, averageFieldLength, ids, labels } = header;
    const [shortIds, fieldLengths, tree, offsets, postings] = arrays;
    if (
      !Number.isInteger(documentCount) ||
      !Number.isInteger(nextId) ||
      !isArrayOf(averageFieldLength, 'number') ||
      // None for an index of no documents.
      (averageFieldLength.length !== FIELD_COUNT && averageFieldLength.length !== 0) ||
      !isArrayOf(ids, 'string') ||
      !isArrayOf(labels, 'string') ||
      arrays.length !== 5 ||
      shortIds!.length !== ids.length ||
      fieldLengths!.length !== ids.length * FIELD_COUNT ||
      !validOffsets(offsets!, postings!.length)
    ) {
      throw new Error('not a saved term index');
    }
    const index = new TermIndex();
    index._documentCount = documentCount as number;
    index._nextId = nextId as number;
    index._avgFieldLength = averageFieldLength;
    index.lengths = new Float64Array(Math.max(index._nextId, 64) * FIELD_COUNT);
    for (let i = 0; i < ids.length; i++) {
      const shortId = shortIds![i]!;
      if (shortId < 0 || shortId >= index._nextId) throw new Error('not a saved term index');
      index._documentIds.set(shortId, ids[i]);
      index._idToShortId.set(ids[i], shortId);
      // Scoring reads these; MiniSearch's own per-document arrays are made by decodeAll, for its updates.
      for (let field = 0; field < FIELD_COUNT; field++)
        index.lengths[shortId * FIELD_COUNT + field] = fieldLengths![i * FIELD_COUNT + field]!;
    }
    // Until decoded, a term's value in the tree is its position in the saved postings.
    // MiniSearch types its tree node by node (RadixTree); a node made here has the same shape.
    index.tree._tree = radixTreeOf(tree!, labels, offsets!.length - 1) as unknown as SearchableMap<Postings | number>['_tree'];
    index.saved = { offsets: offsets!, postings: postings!, decoded: new Map() };
    return index;
  }

  /**
   * Decodes every term still saved, into the tree, and makes MiniSearch's per-document field lengths: its own
   * updates expect both there.
   */
  private decodeAll(): void {
    if (this.saved === undefined) return;
    const decoded: Array<[string, Postings]> = [];
    for (const [term, value] of this.tree) if (typeof value === 'number') decoded.push([term, this.decode(value)]);
    for (const [term, postings] of decoded) this.tree.set(term, postings);
    for (const shortId of this._documentIds.keys()) {
      this._fieldLength.set(shortId, Array.from(this.lengths.subarray(shortId * FIELD_COUNT, (shortId + 1) * FIELD_COUNT)));
    }
    this.saved = undefined;
  }

  /** The postings of the saved term at `position`, decoded once. */
  private decode(position: number): Postings {
    const saved = this.saved!;
    let postings = saved.decoded.get(position);
    if (postings !== undefined) return postings;
    postings = new Map();
    const data = saved.postings;
    const end = saved.offsets[position + 1]!;
    let at = saved.offsets[position]!;
    while (at + 2 <= end) {
      const fieldId = data[at]!;
      const count = data[at + 1]!;
      // A damaged file can hold anything here: what is not a field and a count ends the term (and so the loop).
      if (fieldId < 0 || fieldId >= FIELD_COUNT || count < 0) break;
      const stop = Math.min(end, at + 2 + 2 * count);
      const documents = new Map<number, number>();
      for (at += 2; at + 2 <= stop; at += 2) {
        const shortId = data[at]!;
        if (shortId >= 0 && shortId < this._nextId) documents.set(shortId, data[at + 1]!);
      }
      postings.set(fieldId, documents);
      at = stop;
    }
    saved.decoded.set(position, postings);
    return postings;
  }

  /** A value of the tree as postings, decoding a saved term's. */
  private postingsOf(value: Postings | number | undefined): Postings | undefined {
    return typeof value === 'number' ? this.decode(value) : value;
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
    return this.postingsOf(this.tree.get(term));
  }

  /**
   * Calls `visit` for every indexed term that starts with `prefix` and is at
   * most `maxExtra` characters longer, the exact term included.
   */
  forEachTermWithPrefix(prefix: string, maxExtra: number, visit: (term: string, postings: TermPostings) => void): void {
    for (const [term, value] of this.tree.atPrefix(prefix)) {
      if (term.length - prefix.length <= maxExtra) visit(term, this.postingsOf(value)!);
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

function isArrayOf<T extends 'string' | 'number'>(value: unknown, type: T): value is Array<T extends 'string' ? string : number> {
  return Array.isArray(value) && value.every((item) => typeof item === type);
}

/** Whether `offsets` cuts `length` saved integers into runs, one per term, in order. */
function validOffsets(offsets: Int32Array, length: number): boolean {
  const terms = offsets.length - 1;
  if (terms < 0 || offsets[0] !== 0 || offsets[terms] !== length) return false;
  for (let i = 1; i <= terms; i++) if (offsets[i]! < offsets[i - 1]!) return false;
  return true;
}

/**
 * The radix tree `save` wrote: per node, its number of entries, then each entry's label (an index into `labels`) and
 * that child node, or -1 and a term's position for the node's own term. Throws when `saved` is not such a tree.
 */
function radixTreeOf(saved: Int32Array, labels: readonly string[], terms: number): RadixNode {
  let at = 0;
  const next = () => {
    if (at >= saved.length) throw new Error('not a saved term tree');
    return saved[at++]!;
  };
  const node = (): RadixNode => {
    const made: RadixNode = new Map();
    for (let entries = next(); entries > 0; entries--) {
      const label = next();
      if (label === -1) {
        const position = next();
        if (position < 0 || position >= terms) throw new Error('not a saved term tree');
        made.set(TREE_LEAF, position);
      } else {
        if (label < 0 || label >= labels.length) throw new Error('not a saved term tree');
        made.set(labels[label]!, node());
      }
    }
    return made;
  };
  const root = node();
  if (at !== saved.length) throw new Error('not a saved term tree');
  return root;
}
