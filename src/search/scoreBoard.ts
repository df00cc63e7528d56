/**
 * Per-document score accumulators for one ranked list, reused across queries
 * so a search allocates only its small result lists.
 */

/** A document and its final score in a ranked list. */
export interface Scored {
  readonly doc: number;
  readonly score: number;
}

/**
 * Dense arrays indexed by document short id. `touched` lists the documents
 * with a score, so reading and resetting the board costs the matches, not the
 * index size.
 */
export class ScoreBoard {
  private scores = new Float64Array(0);
  /** How many distinct query terms matched each document. */
  private termHits = new Uint16Array(0);
  /** The serial of the last query term that hit each document. */
  private lastTerm = new Int32Array(0);
  private touched = new Int32Array(0);
  private touchedCount = 0;
  private termSerial = 0;

  /** Grows the arrays to hold short ids below `limit`. Only between queries. */
  ensureCapacity(limit: number): void {
    if (this.scores.length >= limit) return;
    const size = Math.max(limit, this.scores.length * 2, 64);
    this.scores = new Float64Array(size);
    this.termHits = new Uint16Array(size);
    this.lastTerm = new Int32Array(size);
    this.touched = new Int32Array(size);
    this.termSerial = 0;
  }

  /** Starts a new query term: its matches (prefix variants included) count once. */
  beginTerm(): void {
    this.termSerial += 1;
    if (this.termSerial === 0x7fffffff) {
      this.lastTerm.fill(0);
      this.termSerial = 1;
    }
  }

  /** Adds a term's contribution to a document's score. */
  add(doc: number, score: number): void {
    if (this.lastTerm[doc] !== this.termSerial) {
      this.lastTerm[doc] = this.termSerial;
      // Scores are always positive, so a document with no hits is untouched.
      if (this.termHits[doc] === 0) this.touched[this.touchedCount++] = doc;
      this.termHits[doc] = (this.termHits[doc] ?? 0) + 1;
    }
    this.scores[doc] = (this.scores[doc] ?? 0) + score;
  }

  /**
   * A document's final score: the BM25+ sum times the number of distinct query
   * terms it matched. The coordination factor is what MiniSearch applies too;
   * it favours a tool matching "water" and "quality" over one repeating "water".
   */
  scoreOf(doc: number): number {
    return (this.scores[doc] ?? 0) * (this.termHits[doc] ?? 0);
  }

  /**
   * The best `limit` documents, best first; ties go to the smaller name so the
   * order never depends on insertion order.
   */
  top(limit: number, nameOf: (doc: number) => string): Scored[] {
    const best: Scored[] = [];
    if (limit <= 0) return best;
    const { scores, termHits, touched } = this;
    // The score a document must reach to enter a full list; read per document,
    // so kept in a local rather than looked up in `best`.
    let threshold = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.touchedCount; i++) {
      const doc = touched[i] as number;
      const score = (scores[doc] as number) * (termHits[doc] as number);
      if (score < threshold) continue;
      const full = best.length === limit;
      if (full && !ranksBefore(score, doc, best[limit - 1] as Scored, nameOf)) continue;
      // Insertion into a short sorted list: limit is small (max_results).
      let at = full ? limit - 1 : best.length;
      while (at > 0 && ranksBefore(score, doc, best[at - 1] as Scored, nameOf)) {
        best[at] = best[at - 1] as Scored;
        at -= 1;
      }
      best[at] = { doc, score };
      if (best.length === limit) threshold = (best[limit - 1] as Scored).score;
    }
    return best;
  }

  /** Clears every touched document; call once the query's lists are read. */
  reset(): void {
    for (let i = 0; i < this.touchedCount; i++) {
      const doc = this.touched[i] as number;
      this.scores[doc] = 0;
      this.termHits[doc] = 0;
    }
    this.touchedCount = 0;
  }
}

function ranksBefore(score: number, doc: number, other: Scored, nameOf: (doc: number) => string): boolean {
  if (score !== other.score) return score > other.score;
  return nameOf(doc) < nameOf(other.doc);
}
