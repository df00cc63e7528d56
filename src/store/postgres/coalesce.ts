/**
 * Writes of concurrent calls that go to the database together: while one
 * statement is on its way, the writes submitted meanwhile wait and then leave
 * as one. Nothing waits when nothing is on its way, so a lone call pays no
 * delay; under load, N calls cost one round trip and one commit instead of N.
 * A batch the database refuses is sent again one write at a time, so one bad
 * write fails only its own call.
 */

/** Writes sent in one statement at most. */
const MAX_BATCH = 100;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class Coalescer<T, R> {
  private waiting: Array<Waiting<T, R>> = [];
  private sending = false;

  /**
   * @param sendMany one statement for several writes; its results in the writes' order
   * @param sendOne one write on its own
   */
  constructor(
    private readonly sendMany: (items: T[]) => Promise<R[]>,
    private readonly sendOne: (item: T) => Promise<R>,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.sending) void this.send();
    });
  }

  private async send(): Promise<void> {
    this.sending = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        if (batch.length === 1) {
          const [only] = batch as [Waiting<T, R>];
          await this.sendOne(only.item).then(only.resolve, only.reject);
          continue;
        }
        try {
          const results = await this.sendMany(batch.map((waiting) => waiting.item));
          batch.forEach((waiting, i) => waiting.resolve(results[i]!));
        } catch {
          await Promise.all(batch.map((waiting) => this.sendOne(waiting.item).then(waiting.resolve, waiting.reject)));
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
