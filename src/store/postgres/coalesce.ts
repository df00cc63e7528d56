/**
 * Writes of concurrent calls that go to the database together: while one
 * statement is on its way, the writes submitted meanwhile wait and then leave
 * as one. Nothing waits when nothing is on its way, so a lone call pays no
 * delay; under load, N calls cost one round trip and one commit instead of N.
 * A statement still on its way after {@link STALL_MS} (a connection that
 * hangs, say) no longer holds the others back: they leave beside it. A failed
 * batch is sent again one write at a time, so one bad write fails only its own
 * call, unless it failed in a way each write alone would fail again (a time
 * limit, say): then each of its writes fails with that error at once rather
 * than waiting for the same failure in turn.
 */

/** Writes sent in one statement at most. */
const MAX_BATCH = 100;
/** After this long on its way, a statement lets the writes waiting behind it leave beside it. */
const STALL_MS = 1000;
/** Statements on their way at once, stalled ones included (the store's pool has 10 connections). */
const MAX_IN_FLIGHT = 4;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class Coalescer<T, R> {
  private waiting: Array<Waiting<T, R>> = [];
  private inFlight = 0;
  /** Statements on their way for longer than the stall time. */
  private stalled = 0;

  /**
   * @param sendMany one statement for several writes; its results in the writes' order
   * @param sendOne one write on its own
   * @param refusedForContent whether a failed batch may have failed for one of its writes (then each is sent alone)
   */
  constructor(
    private readonly sendMany: (items: T[]) => Promise<R[]>,
    private readonly sendOne: (item: T) => Promise<R>,
    private readonly refusedForContent: (error: unknown) => boolean = () => true,
    private readonly stallMs = STALL_MS,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      // Only a statement on its way that has not stalled makes a write wait for it.
      if (this.inFlight === this.stalled && this.inFlight < MAX_IN_FLIGHT) void this.send();
    });
  }

  /** Sends what waits, batch after batch, until nothing does. */
  private async send(): Promise<void> {
    this.inFlight += 1;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        let stalled = false;
        const timer = setTimeout(() => {
          stalled = true;
          this.stalled += 1;
          if (this.waiting.length > 0 && this.inFlight === this.stalled && this.inFlight < MAX_IN_FLIGHT) void this.send();
        }, this.stallMs);
        timer.unref();
        try {
          await this.sendBatch(batch);
        } finally {
          clearTimeout(timer);
          if (stalled) this.stalled -= 1;
        }
      }
    } finally {
      this.inFlight -= 1;
    }
  }

  private async sendBatch(batch: Array<Waiting<T, R>>): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Waiting<T, R>];
      return this.sendOne(only.item).then(only.resolve, only.reject);
    }
    let results: R[] | undefined;
    try {
      results = await this.sendMany(batch.map((waiting) => waiting.item));
    } catch (error) {
      if (!this.refusedForContent(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // One after another: a refused batch must not take every connection of the pool at once.
      for (const waiting of batch) await this.sendOne(waiting.item).then(waiting.resolve, waiting.reject);
      return;
    }
    batch.forEach((waiting, i) => waiting.resolve(results[i]!));
  }
}
