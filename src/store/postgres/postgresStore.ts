/**
 * The {@link Store} on PostgreSQL, for several agentport instances serving the
 * same threads (behind a load balancer, say). The database assigns `seq`
 * (a row lock on the thread while a message is appended), so appends from
 * any number of processes stay unique and in order; a thread's turn lock is a
 * PostgreSQL advisory lock, which the database releases by itself when the
 * process holding it dies. Secret variables are encrypted before they are
 * sent (AES-256-GCM, the file store's scheme and key: every instance needs
 * the same `AGENTPORT_SECRET_KEY`). Files are `bytea` rows, at most
 * {@link FILE_LIMITS} `maxFileBytes` each, read back in chunks.
 *
 * Tables live in one schema (default `agentport`), created and migrated at
 * start (see migrations.ts).
 *
 * A call answers once its write is committed, not once the database has
 * flushed it (`synchronous_commit = off` unless someone chose otherwise): the file
 * store's promise, a killed agentport loses nothing it reported written, with
 * the flush left to the database's own group commit, as the file store leaves
 * it to its fsync timer.
 *
 * A thread created without a given id is written with its first message (or
 * other write), in the same statement; its opening messages may wait for the
 * next write (AppendOptions.withNextWrite), so a one-step run costs one round
 * trip; new threads written at the same moment share one statement
 * (coalesce.ts). Until then it exists in the process that created it only, as
 * in the file store.
 */
import pg from 'pg';
import { AgentportError } from '../../errors.js';
import {
  applyMessagePatch,
  buildFileRef,
  buildMessage,
  buildThread,
  compareThreads,
  copyBytes,
  jsonCopy,
  KeyedQueue,
  writeWaitingAtClose,
  messageNotFound,
  patchThread,
  pathClash,
  threadNotFound,
  validateMessageIds,
  validateMessagePatch,
  validateVariables,
} from '../internal.js';
import {
  assertValidThreadId,
  directoryPrefix,
  isValidThreadId,
  matchesPrefix,
  normalizeThreadPath,
  normalizeThreadPathForWrite,
} from '../paths.js';
import {
  SECRET_KEY_BYTES,
  SECRET_KEY_ENV,
  decryptSecret,
  encryptSecret,
  isEncryptedValue,
  keySourceOf,
  loadSecretKey,
  type EncryptedValue,
} from '../secretKey.js';
import type {
  AppendOptions,
  AttachmentRef,
  FileInfo,
  MessagePatch,
  NewMessage,
  Store,
  StoredMessage,
  ThreadRecord,
  VariableValue,
} from '../types.js';
import { Coalescer } from './coalesce.js';
import { cannotConnect, refusedForContent } from './failures.js';
import { migrate } from './migrations.js';
import { SCHEMA_NAME, SCHEMA_NAME_RULE } from './schemaName.js';
import { UNLESS_CHOSEN_OFF, synchronousCommitFrom, type SynchronousCommit } from './synchronousCommit.js';

/**
 * Sizes of the files kept here. Tests lower them to reach them quickly.
 *
 * A `bytea` value comes back as hex text, twice its size, and one string in Node holds at most 2^29 - 24
 * characters (about 512 MiB): a 256 MiB file in one value could be written but never read. Files are read in
 * chunks instead, each well under that.
 */
export const FILE_LIMITS = {
  /** The largest file a thread may keep here (PostgreSQL's own limit for one value is 1 GB). */
  maxFileBytes: 256 * 1024 * 1024,
  /** Bytes read per statement: a file up to this size takes one round trip. */
  readChunkBytes: 32 * 1024 * 1024,
};
const LOCK_POLL_MS = 50;

export interface PostgresStoreOptions {
  /** A `postgres://` connection string. */
  url: string;
  /** The schema holding agentport's tables (created when missing). Default `agentport`. */
  schema?: string;
  /** Where a generated secret key is kept when `AGENTPORT_SECRET_KEY` is not set. */
  keyDir?: string;
  /** 32-byte key for secret variables; default `AGENTPORT_SECRET_KEY`, else `<keyDir>/secret.key`. */
  secretKey?: Buffer;
  /** Connections in the pool for queries (locks use connections of their own). Default 10. */
  poolSize?: number;
  /**
   * Longest a statement may run, and a transaction stay idle, before PostgreSQL ends it (a row lock
   * that is never released, a server in trouble): the call fails with the database's message instead
   * of waiting for ever. Sent with each connection, so it takes precedence over the role's or the
   * database's settings and PGOPTIONS; a `statement_timeout` parameter in the URL wins over it.
   * Default 30 000 ms (AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS on the command line); 0 sends nothing,
   * leaving the server's settings.
   */
  statementTimeoutMs?: number;
  /**
   * Longest wait for a query connection, new or from the pool, and longest a new lock connection may take to connect
   * (a turn waiting for a free one, or for the lock itself, is not cut short). Default 10 000 ms; 0 waits for ever.
   */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL's `synchronous_commit` for the store's writes, set on each query connection. By default `off`, unless
   * something else chose a value (the server's configuration, the role's or the database's `SET`, the URL's
   * `options`) or the server has synchronous standbys: a commit answers once it is in the database's memory and
   * visible to every instance, and reaches the disk within three times the server's `wal_writer_delay` (600 ms by
   * default), the file store's group commit in the database's terms. A value given here is set whatever the database
   * says; `server` sets nothing.
   */
  synchronousCommit?: SynchronousCommit;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

type StoredVariable =
  | { name: string; secret: false; scoped?: boolean; value: string }
  | { name: string; secret: true; scoped?: boolean; encrypted: EncryptedValue };

export class PostgresStore implements Store {
  private readonly pool: pg.Pool;
  /** Connections holding advisory locks: a session lock belongs to the connection that took it. */
  private readonly lockPool: pg.Pool;
  private readonly schema: string;
  private ready: Promise<void> | undefined;
  /**
   * Operations on one thread leave this process in the order they were started (reads see every
   * write started before them); across processes the database orders them.
   */
  private readonly queue = new KeyedQueue();
  /** Connections holding thread locks, dropped (and their locks with them) on close. */
  private readonly heldLocks = new Set<pg.PoolClient>();
  private keyPromise: Promise<Buffer> | undefined;
  /** The prepared statements (name and text with the schema filled in), by their text as written here (see statement()). */
  private readonly statements = new Map<string, { name: string; text: string }>();
  /** Threads created here that are not in the database yet (see the class comment). */
  private readonly unwritten = new Map<string, ThreadRecord>();
  private closing: Promise<void> | undefined;
  /** New threads' first writes, sent together when calls write at the same moment. */
  private readonly firstWrites = new Coalescer<FirstWrite, string[]>(
    (writes) => this.insertManyWithMessages(writes),
    (write) => this.insertOneWithMessages(write),
    refusedForContent,
  );
  /** Messages of such threads waiting to be written with them (AppendOptions.withNextWrite), in seq order. */
  private readonly waiting = new Map<string, WaitingMessage[]>();

  constructor(private readonly options: PostgresStoreOptions) {
    const schema = options.schema ?? 'agentport';
    if (!SCHEMA_NAME.test(schema)) {
      throw new AgentportError('INVALID_ARGUMENTS', `database schema ${JSON.stringify(schema)} must be ${SCHEMA_NAME_RULE}`);
    }
    if (options.secretKey !== undefined && options.secretKey.length !== SECRET_KEY_BYTES) {
      throw new AgentportError('SECRET_KEY_INVALID', `PostgresStore secretKey must be a Buffer of ${SECRET_KEY_BYTES} bytes`);
    }
    this.schema = schema;
    const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    const limits: pg.PoolConfig = {
      connectionString: options.url,
      // Sent with each new connection; the URL's own parameters win over them.
      ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout } : {}),
    };
    const connectTimeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const synchronousCommit =
      options.synchronousCommit === undefined
        ? undefined
        : synchronousCommitFrom(options.synchronousCommit, 'PostgresStore synchronousCommit');
    // Set on each new query connection before the pool hands it out (a failure ends it and fails the waiting call with
    // the database's message; the connect timeout is over by then, the statement timeout is not). Not a startup
    // option: an `options` parameter in the URL would replace it, and the default must see what else was chosen.
    const setCommit = synchronousCommit === undefined ? UNLESS_CHOSEN_OFF : `SET synchronous_commit = ${synchronousCommit}`;
    this.pool = new pg.Pool({
      ...limits,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: connectTimeout,
      ...(synchronousCommit === 'server'
        ? {}
        : {
            // pg-pool waits for a promise returned here before handing the connection out (its types say void).
            // eslint-disable-next-line @typescript-eslint/no-misused-promises
            onConnect: async (client: pg.ClientBase) => {
              await client.query(setCommit);
            },
          }),
    });
    // Turns waiting for a lock connection queue as long as it takes (each has its own THREAD_BUSY deadline once connected),
    // but connecting one gives up after the connect timeout: a database that accepts connections and never answers
    // fails the turn instead of holding it for ever. (The pool's own timeout would also end the wait in its queue.)
    // Keep-alive: a lock's connection is idle while held, and a peer gone without a word must still be noticed (probes
    // start after 10 s idle; the system's default is often two hours).
    this.lockPool = new pg.Pool({
      ...limits,
      Client: connectingWithin(connectTimeout),
      max: 100,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle connection the server dropped must not crash the process.
    this.pool.on('error', () => {});
    this.lockPool.on('error', () => {});
  }

  /** Connects and applies migrations; every method waits for it, so calling it is optional. */
  open(): Promise<void> {
    return (this.ready ??= (async () => {
      const client = await this.pool.connect().catch((error: unknown) => {
        throw cannotConnect(this.options.url, error);
      });
      try {
        await migrate(client, this.schema);
      } finally {
        client.release();
      }
    })());
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.open();
    return this.pool.query<R>(this.statement(text, values));
  }

  /**
   * A statement by name: each connection parses and plans it once, not at every call (on a busy machine the
   * database's own CPU is the server's too). Every statement here is fixed text with parameters.
   */
  private statement(text: string, values: unknown[]): pg.QueryConfig {
    let prepared = this.statements.get(text);
    if (prepared === undefined) {
      prepared = { name: `agentport_${this.statements.size + 1}`, text: text.replaceAll('$schema', this.schema) };
      this.statements.set(text, prepared);
    }
    return { name: prepared.name, text: prepared.text, values };
  }

  /** Runs `work` in a transaction on one connection (`begin` starts it: another isolation level, say). */
  private async transaction<T>(work: (run: Run) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    await this.open();
    const client = await this.pool.connect();
    try {
      await client.query(begin);
      const result = await work((text, values = []) => client.query(this.statement(text, values)));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private key(): Promise<Buffer> {
    return (this.keyPromise ??= this.options.secretKey
      ? Promise.resolve(this.options.secretKey)
      : loadSecretKey(this.options.keyDir ?? '.agentport'));
  }

  private static aad(threadId: string, name: string): string {
    return `agentport/variable/v1/${threadId}/${name}`;
  }

  /** Throws THREAD_NOT_FOUND unless the thread exists (for reads that found no rows). */
  private async requireThread(id: string): Promise<void> {
    const { rowCount } = await this.query('SELECT 1 FROM $schema.threads WHERE id = $1', [id]);
    if (!rowCount) throw threadNotFound(id);
  }

  /** {@inheritDoc Store.createThread} */
  async createThread(init: { prompt: string; parentId?: string; id?: string; meta?: Record<string, unknown> }): Promise<ThreadRecord> {
    const record = buildThread(init);
    if (init.id === undefined) {
      // A generated id is unused: nothing to check, so nothing to send until the thread has something to keep.
      this.unwritten.set(record.id, record);
      return jsonCopy(record, 'thread');
    }
    if (!(await this.insertThread(record))) throw new AgentportError('THREAD_EXISTS', `Thread ${record.id} already exists`);
    return record;
  }

  /** Inserts a thread's row unless one with its id is there; whether it did. */
  private async insertThread(record: ThreadRecord): Promise<boolean> {
    const { rowCount } = await this.query(
      'INSERT INTO $schema.threads (id, record, status, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
      [record.id, JSON.stringify(record), record.status, record.createdAt],
    );
    return Boolean(rowCount);
  }

  /**
   * Writes a thread created here to the database (inside the thread's queue): with `record` (else the one
   * kept here), its waiting messages and `then` after them; returns the seqs of those messages. A row already
   * there is this thread's, written by an earlier try whose answer was lost: whatever that try did not write
   * (the record, messages deferred or sent since) is written after what it holds.
   */
  private async materialize(id: string, record?: ThreadRecord, then?: WaitingMessage): Promise<string[]> {
    const pending = this.unwritten.get(id);
    if (pending === undefined) return [];
    const messages = [...(this.waiting.get(id) ?? []), ...(then ? [then] : [])];
    let seqs = messages.length ? await this.insertWithMessages(id, record ?? pending, messages) : [];
    const inserted = messages.length ? seqs.length > 0 : await this.insertThread(record ?? pending);
    if (!inserted) {
      seqs = await this.catchUp(id, messages);
      if (record)
        await this.query('UPDATE $schema.threads SET record = $2, status = $3 WHERE id = $1', [id, JSON.stringify(record), record.status]);
    }
    this.unwritten.delete(id);
    this.waiting.delete(id);
    return seqs;
  }

  /** The seqs of `messages` in a thread already in the database: those it lacks are appended, in order. */
  private async catchUp(id: string, messages: readonly WaitingMessage[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const { rows } = await this.query<{ id: string; seq: string }>(
      'SELECT id, seq FROM $schema.messages WHERE thread_id = $1 AND id = ANY($2)',
      [id, messages.map((m) => m.id)],
    );
    const there = new Map(rows.map((row) => [row.id, row.seq]));
    const seqs: string[] = [];
    for (const message of messages) {
      const seq = there.get(message.id) ?? (await this.appendRow(id, message.id, message.body)).rows[0]?.seq;
      if (seq === undefined) throw threadNotFound(id);
      seqs.push(seq);
    }
    return seqs;
  }

  /** Appends a message row after what the thread holds: its seq comes from the thread's row, locked for the statement. */
  private appendRow(threadId: string, id: string, body: string): Promise<pg.QueryResult<{ seq: string }>> {
    return this.query<{ seq: string }>(
      `WITH next AS (UPDATE $schema.threads SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq)
       INSERT INTO $schema.messages (thread_id, seq, id, body) SELECT $1, last_seq, $2, $3 FROM next RETURNING seq`,
      [threadId, id, body],
    );
  }

  /**
   * The thread's row and its first messages in one statement, with those of other new threads written at the same
   * moment (see coalesce.ts); the seqs of the rows written, in order (none when the row was there already: written,
   * with these messages, by an earlier try whose answer was lost).
   */
  private insertWithMessages(id: string, record: ThreadRecord, messages: readonly WaitingMessage[]): Promise<string[]> {
    return this.firstWrites.submit({ id, record, messages });
  }

  /** One new thread with its messages. */
  private async insertOneWithMessages({ id, record, messages }: FirstWrite): Promise<string[]> {
    const { rows } = await this.query<{ seq: string }>(
      `WITH thread AS (INSERT INTO $schema.threads (id, record, status, created_at, last_seq) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO NOTHING RETURNING id)
       INSERT INTO $schema.messages (thread_id, seq, id, body)
       SELECT $1, m.seq, m.id, m.body FROM thread, unnest($6::bigint[], $7::text[], $8::text[]) AS m (seq, id, body) RETURNING seq`,
      [
        id,
        JSON.stringify(record),
        record.status,
        record.createdAt,
        messages.length,
        messages.map((m) => m.seq),
        messages.map((m) => m.id),
        messages.map((m) => m.body),
      ],
    );
    return rows.map((row) => row.seq).sort(bySeq);
  }

  /** Several new threads with their messages, in one statement. */
  private async insertManyWithMessages(writes: FirstWrite[]): Promise<string[][]> {
    const messages = writes.flatMap(({ id, messages }) => messages.map((m) => ({ thread: id, ...m })));
    const { rows } = await this.query<{ thread_id: string; seq: string }>(
      `WITH thread AS (INSERT INTO $schema.threads (id, record, status, created_at, last_seq)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
         ON CONFLICT (id) DO NOTHING RETURNING id)
       INSERT INTO $schema.messages (thread_id, seq, id, body)
       SELECT m.thread_id, m.seq, m.id, m.body
       FROM unnest($6::text[], $7::bigint[], $8::text[], $9::text[]) AS m (thread_id, seq, id, body) JOIN thread ON thread.id = m.thread_id
       RETURNING thread_id, seq`,
      [
        writes.map((w) => w.id),
        writes.map((w) => JSON.stringify(w.record)),
        writes.map((w) => w.record.status),
        writes.map((w) => w.record.createdAt),
        writes.map((w) => w.messages.length),
        messages.map((m) => m.thread),
        messages.map((m) => m.seq),
        messages.map((m) => m.id),
        messages.map((m) => m.body),
      ],
    );
    const seqs = new Map<string, string[]>(writes.map((w) => [w.id, []]));
    for (const row of rows) seqs.get(row.thread_id)?.push(row.seq);
    return writes.map((w) => seqs.get(w.id)!.sort(bySeq));
  }

  /** {@inheritDoc Store.getThread} */
  async getThread(id: string): Promise<ThreadRecord | undefined> {
    if (!isValidThreadId(id)) return undefined;
    const pending = this.unwritten.get(id);
    if (pending) return jsonCopy(pending, 'thread');
    const { rows } = await this.query<{ record: string }>('SELECT record FROM $schema.threads WHERE id = $1', [id]);
    return rows[0] ? parse<ThreadRecord>(rows[0].record, `thread ${id}`) : undefined;
  }

  /** {@inheritDoc Store.updateThread} */
  async updateThread(id: string, patch: Partial<Pick<ThreadRecord, 'status' | 'meta'>>): Promise<ThreadRecord> {
    assertValidThreadId(id);
    return this.queue.run(id, async () => {
      const pending = this.unwritten.get(id);
      if (pending) {
        const next = patchThread(pending, patch);
        await this.materialize(id, next);
        return next;
      }
      return this.transaction(async (run) => {
        const { rows } = await run<{ record: string }>('SELECT record FROM $schema.threads WHERE id = $1 FOR UPDATE', [id]);
        if (!rows[0]) throw threadNotFound(id);
        const next = patchThread(parse<ThreadRecord>(rows[0].record, `thread ${id}`), patch);
        await run('UPDATE $schema.threads SET record = $2, status = $3 WHERE id = $1', [id, JSON.stringify(next), next.status]);
        return next;
      });
    });
  }

  /** {@inheritDoc Store.listThreads} */
  async listThreads(): Promise<ThreadRecord[]> {
    // Taken before the query: a thread whose first write lands meanwhile is in one or the other.
    const pending = [...this.unwritten.values()].map((r) => jsonCopy(r, 'thread'));
    const { rows } = await this.query<{ id: string; record: string }>('SELECT id, record FROM $schema.threads');
    const stored = rows.map((row) => parse<ThreadRecord>(row.record, `thread ${row.id}`));
    const ids = new Set(stored.map((r) => r.id));
    return [...stored, ...pending.filter((r) => !ids.has(r.id))].sort(compareThreads);
  }

  /** {@inheritDoc Store.appendMessage} The seq comes from the thread's row, locked for the statement. */
  async appendMessage(threadId: string, message: NewMessage, options?: AppendOptions): Promise<StoredMessage> {
    assertValidThreadId(threadId);
    // Validated (and the id chosen) before the round trip; the seq is filled in from the database.
    const draft = buildMessage(threadId, 1, message);
    const { seq: _seq, threadId: _thread, ...body } = draft;
    const seq = await this.queue.run(threadId, async () => {
      if (!this.unwritten.has(threadId)) return (await this.appendRow(threadId, draft.id, JSON.stringify(body))).rows[0]?.seq;
      const waiting = this.waiting.get(threadId) ?? [];
      const next = { id: draft.id, seq: waiting.length + 1, body: JSON.stringify(body) };
      if (options?.withNextWrite) {
        // Written with the thread by whatever writes it next (or by close).
        this.waiting.set(threadId, [...waiting, next]);
        return String(next.seq);
      }
      // The thread, what waits and this message: one statement.
      return (await this.materialize(threadId, undefined, next)).at(-1);
    });
    if (seq === undefined) throw threadNotFound(threadId);
    return { ...draft, seq: Number(seq) };
  }

  /** {@inheritDoc Store.listMessages} */
  async listMessages(threadId: string): Promise<StoredMessage[]> {
    assertValidThreadId(threadId);
    return this.queue.run(threadId, async () => {
      if (this.unwritten.has(threadId)) {
        return (this.waiting.get(threadId) ?? []).map((m) => this.message(threadId, { seq: String(m.seq), body: m.body }));
      }
      const { rows } = await this.query<{ seq: string; body: string }>(
        'SELECT seq, body FROM $schema.messages WHERE thread_id = $1 ORDER BY seq',
        [threadId],
      );
      if (rows.length === 0) await this.requireThread(threadId);
      return rows.map((row) => this.message(threadId, row));
    });
  }

  private message(threadId: string, row: { seq: string; body: string }): StoredMessage {
    const { id, ...rest } = parse<Omit<StoredMessage, 'seq' | 'threadId'>>(row.body, `a message of thread ${threadId}`);
    return { id, threadId, seq: Number(row.seq), ...rest };
  }

  /** {@inheritDoc Store.updateMessage} */
  async updateMessage(threadId: string, id: string, patch: MessagePatch): Promise<StoredMessage> {
    assertValidThreadId(threadId);
    const checked = validateMessagePatch(threadId, id, patch);
    return this.queue.run(threadId, async () => {
      if (this.waiting.has(threadId)) await this.materialize(threadId);
      if (this.unwritten.has(threadId)) throw messageNotFound(threadId, id);
      return this.transaction(async (run) => {
        const { rows } = await run<{ seq: string; body: string }>(
          'SELECT seq, body FROM $schema.messages WHERE thread_id = $1 AND id = $2 ORDER BY seq FOR UPDATE',
          [threadId, id],
        );
        if (rows.length === 0) {
          const { rowCount } = await run('SELECT 1 FROM $schema.threads WHERE id = $1', [threadId]);
          throw rowCount ? messageNotFound(threadId, id) : threadNotFound(threadId);
        }
        let updated: StoredMessage | undefined;
        for (const row of rows) {
          updated = applyMessagePatch(this.message(threadId, row), checked);
          const { seq: _seq, threadId: _thread, ...body } = updated;
          await run('UPDATE $schema.messages SET body = $3 WHERE thread_id = $1 AND seq = $2', [threadId, row.seq, JSON.stringify(body)]);
        }
        return updated!;
      });
    });
  }

  /** {@inheritDoc Store.deleteMessages} */
  async deleteMessages(threadId: string, ids: readonly string[]): Promise<void> {
    assertValidThreadId(threadId);
    const doomed = validateMessageIds(threadId, ids);
    return this.queue.run(threadId, async () => {
      if (this.waiting.has(threadId)) await this.materialize(threadId);
      if (this.unwritten.has(threadId)) return;
      await this.requireThread(threadId);
      if (doomed.length > 0) await this.query('DELETE FROM $schema.messages WHERE thread_id = $1 AND id = ANY($2)', [threadId, doomed]);
    });
  }

  /** {@inheritDoc Store.writeFile} */
  async writeFile(threadId: string, path: string, data: Uint8Array, info: FileInfo): Promise<AttachmentRef> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPathForWrite(path);
    const ref = buildFileRef(threadPath, data, info);
    if (data.byteLength > FILE_LIMITS.maxFileBytes) {
      throw new AgentportError(
        'INVALID_ARGUMENTS',
        `file ${threadPath} is ${data.byteLength} bytes: the PostgreSQL store keeps files up to ${FILE_LIMITS.maxFileBytes} bytes`,
      );
    }
    const bytes = Buffer.from(copyBytes(data));
    return this.queue.run(threadId, async () => {
      // Outside the transaction: a write refused below must not take the thread's creation back with it.
      await this.materialize(threadId);
      return this.transaction(async (run) => {
        // The thread's row lock orders writes of one thread (the path check below must see the others).
        const { rowCount } = await run('SELECT 1 FROM $schema.threads WHERE id = $1 FOR UPDATE', [threadId]);
        if (!rowCount) throw threadNotFound(threadId);
        const { rows } = await run<{ path: string }>('SELECT path FROM $schema.files WHERE thread_id = $1 AND path <> $2', [
          threadId,
          threadPath,
        ]);
        const clash = pathClash(
          threadPath,
          rows.map((row) => row.path),
        );
        if (clash !== undefined) throw new AgentportError('INVALID_PATH', `Cannot write thread file ${JSON.stringify(path)}: ${clash}`);
        await run(
          'INSERT INTO $schema.files (thread_id, path, ref, data) VALUES ($1, $2, $3, $4) ON CONFLICT (thread_id, path) DO UPDATE SET ref = EXCLUDED.ref, data = EXCLUDED.data',
          [threadId, threadPath, JSON.stringify(ref), bytes],
        );
        return { ...ref };
      });
    });
  }

  /** {@inheritDoc Store.readFile} */
  async readFile(threadId: string, path: string): Promise<{ data: Uint8Array; ref: AttachmentRef } | undefined> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(path);
    return this.queue.run(threadId, async () => {
      if (this.unwritten.has(threadId)) return undefined;
      const chunk = FILE_LIMITS.readChunkBytes;
      // The first chunk comes with the reference: a file of one chunk (most) costs one round trip.
      const first = await this.query<FileHead>(FILE_HEAD, [threadId, threadPath, chunk]);
      let head = first.rows[0];
      if (!head) {
        await this.requireThread(threadId);
        return undefined;
      }
      let data: Uint8Array = copyBytes(head.data);
      if (head.size > chunk) {
        // The rest in chunks, all from one snapshot: a write of the file meanwhile cannot mix two versions.
        const read = await this.transaction(
          (run) => readChunked(run, threadId, threadPath, chunk),
          'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
        );
        if (read === undefined) return undefined;
        ({ head, data } = read);
      }
      return { data, ref: parse<AttachmentRef>(head.ref, `file ${threadPath}`) };
    });
  }

  /** {@inheritDoc Store.listFiles} */
  async listFiles(threadId: string, prefix?: string): Promise<AttachmentRef[]> {
    assertValidThreadId(threadId);
    const dir = directoryPrefix(prefix);
    return this.queue.run(threadId, async () => {
      if (this.unwritten.has(threadId)) return [];
      await this.requireThread(threadId);
      const { rows } = await this.query<{ ref: string }>('SELECT ref FROM $schema.files WHERE thread_id = $1', [threadId]);
      return rows
        .map((row) => parse<AttachmentRef>(row.ref, `a file of thread ${threadId}`))
        .filter((ref) => matchesPrefix(ref.path, dir))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    });
  }

  /** {@inheritDoc Store.deleteFile} */
  async deleteFile(threadId: string, path: string): Promise<boolean> {
    assertValidThreadId(threadId);
    const threadPath = normalizeThreadPath(path);
    return this.queue.run(threadId, async () => {
      if (this.unwritten.has(threadId)) return false;
      const { rowCount } = await this.query('DELETE FROM $schema.files WHERE thread_id = $1 AND path = $2', [threadId, threadPath]);
      if (!rowCount) await this.requireThread(threadId);
      return Boolean(rowCount);
    });
  }

  /** {@inheritDoc Store.setVariables} Secret values are encrypted before they leave the process. */
  async setVariables(threadId: string, values: VariableValue[]): Promise<void> {
    assertValidThreadId(threadId);
    const incoming = validateVariables(threadId, values);
    const key = incoming.some((v) => v.secret) ? await this.key() : undefined;
    const entries: StoredVariable[] = incoming.map((v) => {
      const base = { name: v.name, ...(v.scoped !== undefined ? { scoped: v.scoped } : {}) };
      if (!v.secret) return { ...base, secret: false, value: v.value };
      return { ...base, secret: true, encrypted: encryptSecret(key!, v.value, PostgresStore.aad(threadId, v.name)) };
    });
    await this.queue.run(threadId, async () => {
      await this.materialize(threadId);
      await this.transaction(async (run) => {
        const { rowCount } = await run('SELECT 1 FROM $schema.threads WHERE id = $1 FOR UPDATE', [threadId]);
        if (!rowCount) throw threadNotFound(threadId);
        for (const entry of entries) {
          // A replaced variable keeps its place; a new one goes last.
          await run(
            `INSERT INTO $schema.variables (thread_id, name, position, entry)
           VALUES ($1, $2, (SELECT coalesce(max(position), 0) + 1 FROM $schema.variables WHERE thread_id = $1), $3)
           ON CONFLICT (thread_id, name) DO UPDATE SET entry = EXCLUDED.entry`,
            [threadId, entry.name, JSON.stringify(entry)],
          );
        }
      });
    });
  }

  /** {@inheritDoc Store.getVariables} */
  async getVariables(threadId: string): Promise<VariableValue[]> {
    assertValidThreadId(threadId);
    return this.queue.run(threadId, async () => {
      if (this.unwritten.has(threadId)) return [];
      const { rows } = await this.query<{ name: string; entry: string }>(
        'SELECT name, entry FROM $schema.variables WHERE thread_id = $1 ORDER BY position',
        [threadId],
      );
      if (rows.length === 0) {
        await this.requireThread(threadId);
        return [];
      }
      const entries = rows.map((row) => parse<StoredVariable>(row.entry, `variable "${row.name}" of thread ${threadId}`));
      const key = entries.some((v) => v.secret) ? await this.key() : undefined;
      return entries.map((v) => {
        const base = { name: v.name, ...(v.scoped !== undefined ? { scoped: v.scoped } : {}) };
        if (!v.secret) return { ...base, value: v.value, secret: false };
        if (!isEncryptedValue(v.encrypted))
          throw new AgentportError('CORRUPT_DATA', `variable "${v.name}" of thread ${threadId} is not a readable encrypted value`);
        return { ...base, value: this.decrypt(key!, v.encrypted, threadId, v.name), secret: true };
      });
    });
  }

  /** A secret's value; SECRET_DECRYPT_FAILED names the variable, the thread and where the key comes from (as the file store's). */
  private decrypt(key: Buffer, encrypted: EncryptedValue, threadId: string, name: string): string {
    try {
      return decryptSecret(key, encrypted, PostgresStore.aad(threadId, name));
    } catch (error) {
      throw new AgentportError(
        'SECRET_DECRYPT_FAILED',
        `Cannot decrypt secret variable "${name}" of thread ${threadId}: the key (${keySourceOf(this.options.secretKey !== undefined)}) differs from the one it was stored with (every instance on the database needs the same ${SECRET_KEY_ENV}), or the row was altered`,
        undefined,
        { cause: error },
      );
    }
  }

  /**
   * {@inheritDoc Store.lockThread} A session advisory lock on a connection of
   * its own, held until released (or until this process's connection drops).
   */
  async lockThread(threadId: string, waitMs: number, onLost?: (error: AgentportError) => void): Promise<() => Promise<void>> {
    assertValidThreadId(threadId);
    await this.open();
    // A thread locked is about to be known beyond this process: what waits is written now.
    await this.queue.run(threadId, async () => {
      if (this.waiting.has(threadId)) await this.materialize(threadId);
    });
    const client = await this.lockPool.connect().catch((error: unknown) => {
      throw cannotConnect(this.options.url, error);
    });
    // The connection can drop at any time (the server ended it, a failover, the network): pg then emits 'error'
    // on a client that runs no query, which with no listener is an uncaught exception. Until the lock is held a
    // drop fails the next poll; once held, it is the lock lost.
    let dropped: (error?: unknown) => void = () => {};
    const listener = (error?: unknown) => dropped(error);
    client.on('error', listener);
    client.on('end', listener);
    const detach = () => {
      client.off('error', listener);
      client.off('end', listener);
    };
    const lockKey = `agentport-thread:${this.schema}:${threadId}`;
    const deadline = Date.now() + waitMs;
    try {
      for (;;) {
        const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [lockKey]);
        if (rows[0]?.locked) break;
        if (Date.now() >= deadline) {
          throw new AgentportError('THREAD_BUSY', `thread ${threadId} is busy in another process; try again when its turn has ended`, {
            threadId,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      }
    } catch (error) {
      detach();
      // A connection that failed is not given back to the pool.
      client.release(error instanceof AgentportError ? undefined : true);
      throw error;
    }
    this.heldLocks.add(client);
    let released = false;
    dropped = (error) => {
      if (released || !this.heldLocks.delete(client)) return;
      released = true;
      detach();
      client.release(true);
      onLost?.(lockLost(threadId, error));
    };
    return async () => {
      if (released || !this.heldLocks.delete(client)) return;
      released = true;
      try {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
        client.release();
      } catch {
        // A broken connection lost the lock with it: do not reuse that connection.
        client.release(true);
      } finally {
        // Only now: a connection that drops during the unlock must still find a listener (else it is uncaught).
        detach();
      }
    };
  }

  /** {@inheritDoc Store.close} Closing again waits for the first close. */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    await this.queue.idle();
    await writeWaitingAtClose(this.queue, this.waiting.keys(), (threadId) => this.materialize(threadId));
    // Locks still held go with their connections.
    const held = [...this.heldLocks];
    // Cleared first: the connections' end is not a lock lost (see lockThread).
    this.heldLocks.clear();
    for (const client of held) client.release(true);
    await Promise.all([this.pool.end(), this.lockPool.end()]);
  }
}

/** pg's client with a connect timeout of its own: it bounds connecting only, not a wait for a place in a pool. */
function connectingWithin(ms: number): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: ms });
    }
  };
}

/** A new thread and its first messages, as its rows will hold them. */
interface FirstWrite {
  id: string;
  record: ThreadRecord;
  messages: readonly WaitingMessage[];
}

/** Seqs (bigint as text) in numeric order. */
const bySeq = (a: string, b: string): number => Number(a) - Number(b);

/** A message of a thread not in the database yet, as its row will hold it. */
interface WaitingMessage {
  id: string;
  seq: number;
  body: string;
}

/** A file's reference, size and first chunk (its first `$3` bytes). */
const FILE_HEAD = `SELECT ref, octet_length(data) AS size, substring(data FROM 1 FOR $3) AS data
  FROM $schema.files WHERE thread_id = $1 AND path = $2`;

interface FileHead {
  ref: string;
  /** octet_length is an integer: pg gives a number. */
  size: number;
  data: Buffer;
}

/**
 * A file read chunk by chunk (in a transaction of one snapshot); undefined when it is gone. Each chunk is one
 * statement, so no value coming back is longer than a string can hold (see FILE_LIMITS).
 */
async function readChunked(
  run: Run,
  threadId: string,
  threadPath: string,
  chunk: number,
): Promise<{ head: FileHead; data: Uint8Array } | undefined> {
  const head = (await run<FileHead>(FILE_HEAD, [threadId, threadPath, chunk])).rows[0];
  if (!head) return undefined;
  const data = new Uint8Array(head.size);
  data.set(head.data);
  for (let at = head.data.byteLength; at < data.byteLength;) {
    const { rows } = await run<{ data: Buffer }>(
      'SELECT substring(data FROM $3 FOR $4) AS data FROM $schema.files WHERE thread_id = $1 AND path = $2',
      [threadId, threadPath, at + 1, chunk],
    );
    const part = rows[0]?.data;
    // The snapshot holds the row still; an empty part would loop for ever, so it is a failure, not a retry.
    if (!part || part.byteLength === 0) throw new AgentportError('CORRUPT_DATA', `file ${threadPath} of thread ${threadId} ended early`);
    data.set(part, at);
    at += part.byteLength;
  }
  return { head, data };
}

/** The error a lock's holder is told when the connection holding it dropped. */
function lockLost(threadId: string, cause: unknown): AgentportError {
  const why = cause instanceof Error ? cause.message : 'the database closed it';
  return new AgentportError(
    'THREAD_LOCK_LOST',
    `the database connection holding thread ${threadId}'s lock dropped (${why}): the turn was stopped, since another process may now run the thread; continue the thread to run it again`,
    { threadId },
    { cause },
  );
}

/** A query on the pool or inside a transaction. */
type Run = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new AgentportError('CORRUPT_DATA', `${what} is stored as unreadable JSON`, undefined, { cause: error });
  }
}
