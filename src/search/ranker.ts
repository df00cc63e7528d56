/**
 * Keyword ranking: BM25+ over the name, description and parameter fields,
 * `+term` name requirements, and fusion of per-clause lists.
 */
import { FIELD_COUNT, NAME_FIELD_ID, type TermIndex, type TermPostings } from './termIndex.js';
import { ScoreBoard, type Scored } from './scoreBoard.js';
import { FIELD_NAMES, type FieldName } from './document.js';

/** Relative weight of each field; the name says most about what a tool does. */
type FieldBoosts = Readonly<Record<FieldName, number>>;

/**
 * Measured on the Seal-Tools dev queries (bench/search.mjs): name 2-4 and
 * parameter weights 0.3-0.7 all land within 0.003 recall@5 of these.
 */
const DEFAULT_FIELD_BOOSTS: FieldBoosts = { name: 3, description: 1, paramNames: 0.5, paramText: 0.5 };

/** Ranking settings; every field has a measured default. */
export interface RankingOptions {
  readonly fieldBoosts?: Partial<FieldBoosts>;
  /** Complete partial query words to longer indexed words (weighted down). Default true. */
  readonly prefix?: boolean;
  /** Rank each clause of a multi-sentence query separately and fuse the lists. Default true. */
  readonly clauses?: boolean;
}

/** What to rank. Terms are normalized (see tokenize.ts). */
export interface RankRequest {
  /** Terms of each clause; one entry when the query is one clause. */
  readonly clauses: readonly (readonly string[])[];
  /**
   * `+term`s, all of which must match. Each is a list of alternatives, and an
   * alternative matches when each of its words starts a word of the tool's
   * name (see `requiredWordSets`).
   */
  readonly required: readonly (readonly (readonly string[])[])[];
  readonly limit: number;
  /** A document left out of the list (the exact-name match, placed first by the caller). */
  readonly exclude?: number;
}

// BM25+ parameters: MiniSearch's defaults, which measured best here too.
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

// Prefix matching completes partial words ("notebo", "analy"): only words the
// index does not have (a whole word matches itself, and plurals are already
// folded), long enough to be specific, and only up to a few extra letters,
// weighted as MiniSearch weighs prefix matches. Expanding every word measured
// the same recall on Seal-Tools at ~20% more query time.
const PREFIX_MIN_LENGTH = 4;
const PREFIX_MAX_EXTRA = 4;
const PREFIX_WEIGHT = 0.375;

// A `+term` also scores (name field only) so that tools matching only the
// requirement still rank, below those matching the other words too.
const REQUIRED_TERM_WEIGHT = 0.1;

// Reciprocal-rank fusion constant. Small, so each clause's best tool reaches
// the top: with 1, first place in one list is worth second place in two
// (1 = 1/2 + 1/2). The usual 60 suits long lists; here each is 10 deep.
const FUSION_K = 1;
// How deep each fused list is read, whatever the limit: the order of the
// first k results then does not depend on how many were asked for.
const FUSION_DEPTH = 10;

const ALL_FIELDS = (1 << FIELD_NAMES.length) - 1;
const NAME_FIELD = 1 << NAME_FIELD_ID;

/** Ranks documents of a {@link TermIndex}; owns the reusable score boards. */
export class Ranker {
  private readonly boosts: Float64Array;
  private readonly prefix: boolean;
  private readonly useClauses: boolean;
  private readonly overall = new ScoreBoard();
  private readonly perClause: ScoreBoard[] = [];

  constructor(
    private readonly index: TermIndex,
    private readonly nameOf: (doc: number) => string,
    options: RankingOptions = {},
  ) {
    const boosts = { ...DEFAULT_FIELD_BOOSTS, ...options.fieldBoosts };
    this.boosts = Float64Array.from(FIELD_NAMES, (field) => boosts[field]);
    this.prefix = options.prefix ?? true;
    this.useClauses = options.clauses ?? true;
  }

  /** Documents best first, at most `limit`. */
  rank(request: RankRequest): number[] {
    const allowed = request.required.length > 0 ? this.requiredMatches(request.required) : undefined;
    if (allowed !== undefined && allowed.size === 0) return [];

    const clauses = this.useClauses ? request.clauses : [request.clauses.flat()];
    const boards = this.prepareBoards(clauses.length > 1 ? clauses.length : 0);
    const overall = [this.overall];

    // Each distinct term is scored once and added to every board whose clause has it.
    const seen = new Set<string>();
    clauses.forEach((terms) => {
      for (const term of terms) {
        if (seen.has(term)) continue;
        seen.add(term);
        const targets = boards.length === 0 ? overall : [this.overall, ...boards.filter((_, i) => clauses[i]?.includes(term))];
        this.scoreTerm(term, 1, ALL_FIELDS, this.completes(term) ? PREFIX_MAX_EXTRA : 0, targets, allowed);
      }
    });
    for (const word of new Set(request.required.flat(2))) {
      this.scoreTerm(word, REQUIRED_TERM_WEIGHT, NAME_FIELD, Number.POSITIVE_INFINITY, overall, allowed);
    }

    const wanted = request.limit + (request.exclude === undefined ? 0 : 1);
    const ranked = boards.length === 0 ? this.overall.top(wanted, this.nameOf) : this.fuse(boards, wanted);
    this.overall.reset();
    for (const board of boards) board.reset();
    const docs: number[] = [];
    for (const { doc } of ranked) if (doc !== request.exclude && docs.length < request.limit) docs.push(doc);
    return docs;
  }

  /** Whether `term` is matched as the start of longer words (see PREFIX_MIN_LENGTH). */
  private completes(term: string): boolean {
    return this.prefix && term.length >= PREFIX_MIN_LENGTH && this.index.postings(term) === undefined;
  }

  private prepareBoards(clauseCount: number): ScoreBoard[] {
    while (this.perClause.length < clauseCount) this.perClause.push(new ScoreBoard());
    const boards = this.perClause.slice(0, clauseCount);
    const limit = this.index.shortIdLimit;
    this.overall.ensureCapacity(limit);
    for (const board of boards) board.ensureCapacity(limit);
    return boards;
  }

  /** Adds one query term's BM25+ contribution (prefix variants included) to `boards`. */
  private scoreTerm(
    term: string,
    weight: number,
    fields: number,
    maxExtra: number,
    boards: readonly ScoreBoard[],
    allowed: ReadonlySet<number> | undefined,
  ): void {
    for (const board of boards) board.beginTerm();
    if (maxExtra === 0) {
      const postings = this.index.postings(term);
      if (postings !== undefined) this.addPostings(postings, weight, fields, boards, allowed);
      return;
    }
    this.index.forEachTermWithPrefix(term, maxExtra, (match, postings) => {
      const extra = match.length - term.length;
      const matchWeight = extra === 0 ? weight : (weight * PREFIX_WEIGHT * match.length) / (match.length + 0.3 * extra);
      this.addPostings(postings, matchWeight, fields, boards, allowed);
    });
  }

  private addPostings(
    postings: TermPostings,
    weight: number,
    fields: number,
    boards: readonly ScoreBoard[],
    allowed: ReadonlySet<number> | undefined,
  ): void {
    const total = this.index.documentCount;
    const lengths = this.index.fieldLengths;
    const single = boards.length === 1 ? boards[0] : undefined;
    for (const [fieldId, docs] of postings) {
      const boost = this.boosts[fieldId] ?? 0;
      if (boost === 0 || (fields & (1 << fieldId)) === 0) continue;
      const matching = docs.size;
      const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
      const fieldWeight = weight * boost * idf;
      // BM25+ term-frequency part: (k+1)tf / (tf + k(1 - b + b*len/avg)), split
      // into constants so the per-posting work is one multiply-add and a divide.
      const constantPart = BM25_K * (1 - BM25_B);
      const lengthPart = (BM25_K * BM25_B) / (this.index.averageFieldLength(fieldId) || 1);
      // forEach over a Map is faster than for...of here: no entry arrays.
      docs.forEach((frequency, doc) => {
        if (allowed !== undefined && !allowed.has(doc)) return;
        const length = lengths[doc * FIELD_COUNT + fieldId] as number;
        const score = fieldWeight * (BM25_D + (frequency * (BM25_K + 1)) / (frequency + constantPart + lengthPart * length));
        if (single !== undefined) single.add(doc, score);
        else for (const board of boards) board.add(doc, score);
      });
    }
  }

  /** Documents whose name satisfies every required term. */
  private requiredMatches(required: RankRequest['required']): Set<number> {
    let allowed: Set<number> | undefined;
    for (const alternatives of required) {
      const matches = new Set<number>();
      for (const words of alternatives) {
        for (const doc of this.nameMatches(words, allowed)) matches.add(doc);
      }
      allowed = matches;
      if (allowed.size === 0) break;
    }
    return allowed ?? new Set();
  }

  /** Documents (within `within`, if given) whose name has a word starting with each of `words`. */
  private nameMatches(words: readonly string[], within: ReadonlySet<number> | undefined): ReadonlySet<number> {
    let found: ReadonlySet<number> | undefined = within;
    for (const word of words) {
      const matches = new Set<number>();
      this.index.forEachTermWithPrefix(word, Number.POSITIVE_INFINITY, (_term, postings) => {
        const docs = postings.get(NAME_FIELD_ID);
        if (docs === undefined) return;
        for (const doc of docs.keys()) if (found === undefined || found.has(doc)) matches.add(doc);
      });
      found = matches;
      if (found.size === 0) break;
    }
    return found ?? new Set();
  }

  /**
   * Reciprocal-rank fusion of the overall list and one list per clause. Ties
   * (common: every list's first place is worth the same) go to the higher
   * overall score, then the smaller name.
   */
  private fuse(boards: readonly ScoreBoard[], wanted: number): Scored[] {
    const fused = new Map<number, number>();
    const depth = Math.max(wanted, FUSION_DEPTH);
    for (const board of [this.overall, ...boards]) {
      board.top(depth, this.nameOf).forEach(({ doc }, rank) => {
        fused.set(doc, (fused.get(doc) ?? 0) + 1 / (FUSION_K + rank));
      });
    }
    const entries = [...fused].map(([doc, score]) => ({ doc, score, overall: this.overall.scoreOf(doc) }));
    entries.sort((a, b) => b.score - a.score || b.overall - a.overall || compareNames(this.nameOf(a.doc), this.nameOf(b.doc)));
    return entries.slice(0, wanted);
  }
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
