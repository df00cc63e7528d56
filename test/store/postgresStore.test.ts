/**
 * The PostgreSQL store against a real server: the Store contract, and what
 * only a shared database shows (several stores on one schema, migrations,
 * locks released by a dying connection). Each store gets a schema of its own,
 * dropped afterwards. Without a reachable server the suite is skipped with
 * one line saying so.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentportError } from '../../src/errors.js';
import { FILE_LIMITS, PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { chooseStore } from '../../src/store/open.js';
import { describeStoreContract, expectStoreError, sampleBytes } from './contract.js';
import { databaseUrl, dropSchema, postgresReachable, sql } from '../support/postgres.js';

const KEY = randomBytes(32);
const reachable = await postgresReachable();
if (!reachable) console.warn(`PostgreSQL store tests skipped: no server answers at ${databaseUrl()} (set AGENTPORT_TEST_DATABASE_URL)`);

function freshSchema(): string {
  return `agentport_test_${randomBytes(6).toString('hex')}`;
}

describe.runIf(reachable)('PostgresStore', () => {
  describeStoreContract('PostgresStore', async () => {
    const schema = freshSchema();
    return {
      store: new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY }),
      cleanup: () => dropSchema(schema),
      another: () => new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY }),
      plantFile: async (threadId, ref, data) => {
        await sql(`INSERT INTO ${schema}.files (thread_id, path, ref, data) VALUES ($1, $2, $3, $4)`, [
          threadId,
          ref.path,
          JSON.stringify(ref),
          Buffer.from(data),
        ]);
        return true;
      },
    };
  });

  describe('on a shared database', () => {
    const schema = freshSchema();
    const stores: PostgresStore[] = [];
    const open = () => {
      const store = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY });
      stores.push(store);
      return store;
    };
    beforeAll(async () => {
      // Several instances starting at once migrate the schema once.
      await Promise.all([open().open(), open().open(), open().open()]);
    });
    afterAll(async () => {
      await Promise.all(stores.map((store) => store.close().catch(() => {})));
      await dropSchema(schema);
    });

    it('[ST-4] keeps seq unique and gapless when several instances append to one thread at once', async () => {
      const [a, b, c] = stores as [PostgresStore, PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      // A thread reaches other instances once it has something to keep (its id with a call's result).
      await a.appendMessage(thread.id, { role: 'user', content: 'first' });
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => [a, b, c][i % 3]!.appendMessage(thread.id, { role: 'user', content: `m${i}` })),
      );
      const seqs = (await b.listMessages(thread.id)).map((m) => m.seq);
      expect(seqs).toEqual(Array.from({ length: 61 }, (_, i) => i + 1));
    });

    it('[ST-1] writes a new thread with its first message, in one statement; until then only its instance knows it', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p', meta: { k: 1 } });
      expect(await a.getThread(thread.id)).toEqual(thread);
      expect((await a.listThreads()).map((t) => t.id)).toContain(thread.id);
      expect(await a.listMessages(thread.id)).toEqual([]);
      expect(await b.getThread(thread.id)).toBeUndefined();
      // Counts what the store sends (the spy calls through).
      const spy = vi.spyOn((a as unknown as { pool: pg.Pool }).pool, 'query');
      const first = await a.appendMessage(thread.id, { role: 'user', content: 'hello' });
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRestore();
      expect(first.seq).toBe(1);
      expect(await b.getThread(thread.id)).toEqual(thread);
      expect((await b.listMessages(thread.id)).map((m) => m.content)).toEqual(['hello']);
      expect((await b.appendMessage(thread.id, { role: 'assistant', content: 'hi' })).seq).toBe(2);
    });

    it('[ST-1] recovers a first write whose answer was lost (the thread row committed): the message goes after it', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      // What an earlier try left when its connection dropped after the commit.
      await sql(`INSERT INTO ${schema}.threads (id, record, status, created_at) VALUES ($1, $2, $3, $4)`, [
        thread.id,
        JSON.stringify(thread),
        thread.status,
        thread.createdAt,
      ]);
      expect((await a.appendMessage(thread.id, { role: 'user', content: 'hello' })).seq).toBe(1);
      expect((await a.listThreads()).filter((t) => t.id === thread.id)).toHaveLength(1);
      expect((await b.listMessages(thread.id)).map((m) => m.content)).toEqual(['hello']);
    });

    it('[ST-1] recovers a first write whose answer was lost with messages waiting since: they go after what it wrote', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      const opening = await a.appendMessage(thread.id, { role: 'system', content: 'rules' }, { withNextWrite: true });
      // An earlier write committed the thread with its opening message, and its answer was lost.
      const { seq: _seq, threadId: _thread, ...body } = opening;
      await sql(
        `WITH t AS (INSERT INTO ${schema}.threads (id, record, status, created_at, last_seq) VALUES ($1, $2, $3, $4, 1) RETURNING id)
         INSERT INTO ${schema}.messages (thread_id, seq, id, body) SELECT $1, 1, $5, $6 FROM t`,
        [thread.id, JSON.stringify(thread), thread.status, thread.createdAt, opening.id, JSON.stringify(body)],
      );
      const later = await a.appendMessage(thread.id, { role: 'user', content: 'hi' }, { withNextWrite: true });
      const answer = await a.appendMessage(thread.id, { role: 'assistant', content: 'hello' });
      expect([opening.seq, later.seq, answer.seq]).toEqual([1, 2, 3]);
      expect((await b.listMessages(thread.id)).map((m) => [m.seq, m.content])).toEqual([
        [1, 'rules'],
        [2, 'hi'],
        [3, 'hello'],
      ]);
      // A status set by the write that found the row is not lost either.
      const other = await a.createThread({ prompt: 'p' });
      await a.appendMessage(other.id, { role: 'user', content: 'x' }, { withNextWrite: true });
      await sql(`INSERT INTO ${schema}.threads (id, record, status, created_at) VALUES ($1, $2, $3, $4)`, [
        other.id,
        JSON.stringify(other),
        other.status,
        other.createdAt,
      ]);
      await a.updateThread(other.id, { status: 'running' });
      expect((await b.getThread(other.id))?.status).toBe('running');
      expect((await b.listMessages(other.id)).map((m) => m.content)).toEqual(['x']);
    });

    it('[ST-4] writes new threads created at the same moment together, each whole and in order', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const threads = await Promise.all(Array.from({ length: 20 }, () => a.createThread({ prompt: 'p' })));
      for (const t of threads) await a.appendMessage(t.id, { role: 'user', content: `q ${t.id}` }, { withNextWrite: true });
      const spy = vi.spyOn((a as unknown as { pool: pg.Pool }).pool, 'query');
      const answers = await Promise.all(threads.map((t) => a.appendMessage(t.id, { role: 'assistant', content: `a ${t.id}` })));
      const statements = spy.mock.calls.length;
      spy.mockRestore();
      expect(answers.map((m) => m.seq)).toEqual(threads.map(() => 2));
      // The first went alone; the others waited for it and went together.
      expect(statements).toBeLessThan(threads.length);
      for (const t of threads) {
        expect((await b.listMessages(t.id)).map((m) => [m.seq, m.content])).toEqual([
          [1, `q ${t.id}`],
          [2, `a ${t.id}`],
        ]);
      }
    });

    it('[ST-4] one instance sees what another wrote, secrets included, and only ciphertext is stored', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p', meta: { from: 'a' } });
      await a.setVariables(thread.id, [{ name: 'API_KEY', value: 'sk-very-secret-1234', secret: true }]);
      expect(await b.getThread(thread.id)).toEqual(thread);
      expect(await b.getVariables(thread.id)).toEqual([{ name: 'API_KEY', value: 'sk-very-secret-1234', secret: true }]);
      const rows = await sql(`SELECT entry FROM ${schema}.variables WHERE thread_id = $1`, [thread.id]);
      expect(JSON.stringify(rows)).not.toContain('sk-very-secret-1234');
    });

    it('[ST-4] [RL-5] a thread lock is held across instances, and freed when its holder releases it', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      const release = await a.lockThread(thread.id, 0);
      await expectStoreError(b.lockThread(thread.id, 100), 'THREAD_BUSY', thread.id);
      const waiting = b.lockThread(thread.id, 5000);
      await release();
      const releaseB = await waiting;
      await releaseB();
    });

    it('[RL-5] a lock whose process died is free again (the database drops it with the connection)', async () => {
      const [a] = stores as [PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      const dying = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY });
      await dying.lockThread(thread.id, 0);
      await expectStoreError(a.lockThread(thread.id, 0), 'THREAD_BUSY');
      await dying.close();
      const release = await a.lockThread(thread.id, 2000);
      await release();
    });

    it('[ST-4] a lock whose connection drops tells its holder (THREAD_LOCK_LOST), throws nothing uncaught, and is free again', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      await a.appendMessage(thread.id, { role: 'user', content: 'hello' });
      // The connection the lock is taken on, to end it from outside as the server, a failover or the network would.
      const lockPool = (a as unknown as { lockPool: pg.Pool }).lockPool;
      const connect = vi.spyOn(lockPool, 'connect');
      let lost: AgentportError | undefined;
      const release = await a.lockThread(thread.id, 0, (error) => (lost = error));
      const client = (await connect.mock.results[0]!.value) as pg.PoolClient & { processID: number };
      connect.mockRestore();
      await sql('SELECT pg_terminate_backend($1)', [client.processID]);
      await expect.poll(() => lost?.code).toBe('THREAD_LOCK_LOST');
      expect(lost?.message).toContain(thread.id);
      // The database dropped the lock with the connection: another instance takes it at once.
      const releaseB = await b.lockThread(thread.id, 0);
      // The lost lock's release does nothing (and does not touch b's lock).
      await release();
      await expectStoreError(a.lockThread(thread.id, 0), 'THREAD_BUSY');
      await releaseB();
      await (
        await a.lockThread(thread.id, 1000)
      )();
    });

    it('[ST-4] connecting for a thread lock gives up after the connect timeout, naming the database and not its password', async () => {
      // Between the store and the database: connections pass through until the database goes silent (from then on it
      // accepts them and never says a word, as one behind a black-holing network does).
      const target = new URL(databaseUrl());
      let silent = false;
      const sockets = new Set<net.Socket>();
      const proxy = net.createServer((socket) => {
        sockets.add(socket);
        if (silent) return;
        const database = net.connect(Number(target.port || 5432), target.hostname);
        sockets.add(database);
        socket.on('error', () => database.destroy());
        database.on('error', () => socket.destroy());
        socket.pipe(database).pipe(socket);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const url = new URL(databaseUrl());
      url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      if (!url.password) url.password = 'pw-not-to-be-shown';
      const store = new PostgresStore({ url: url.toString(), schema, secretKey: KEY, connectTimeoutMs: 400 });
      try {
        // Written through the proxy: the store's query connection is open.
        const thread = await store.createThread({ id: `silent-${randomBytes(4).toString('hex')}`, prompt: 'p' });
        silent = true;
        const started = Date.now();
        const stuck = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still connecting after 10 s')), 10_000).unref());
        const error = await expectStoreError(
          Promise.race([store.lockThread(thread.id, 30_000), stuck]),
          'INTERNAL',
          `cannot connect to PostgreSQL at ${url.host}${url.pathname}: `,
        );
        expect(Date.now() - started).toBeLessThan(5000);
        expect(error.message).not.toContain(url.password);
        // The connection it has goes on serving queries.
        expect((await store.getThread(thread.id))?.id).toBe(thread.id);
      } finally {
        await store.close().catch(() => {});
        for (const socket of sockets) socket.destroy();
        proxy.close();
      }
    });

    it('[ST-4] waiting for a thread lock held elsewhere is not cut short by the connect timeout', async () => {
      const [a] = stores as [PostgresStore];
      const thread = await a.createThread({ id: `held-${randomBytes(4).toString('hex')}`, prompt: 'p' });
      const release = await a.lockThread(thread.id, 0);
      const waiter = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY, connectTimeoutMs: 200 });
      try {
        const started = Date.now();
        await expectStoreError(waiter.lockThread(thread.id, 1200), 'THREAD_BUSY', thread.id);
        expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
      } finally {
        await release();
        await waiter.close();
      }
    });

    it('[ST-4] reads back a file at the size limit, in chunks each under what one string can hold', async () => {
      const [a, b] = stores as [PostgresStore, PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      await a.appendMessage(thread.id, { role: 'user', content: 'hello' });
      const saved = { ...FILE_LIMITS };
      // Lowered to reach them quickly: the real limit (256 MiB) is 8 chunks of 32 MiB.
      Object.assign(FILE_LIMITS, { maxFileBytes: 10_000, readChunkBytes: 3_000 });
      try {
        const data = sampleBytes(FILE_LIMITS.maxFileBytes);
        await a.writeFile(thread.id, '/big.bin', data, { mimeType: 'application/octet-stream' });
        await expectStoreError(
          a.writeFile(thread.id, '/bigger.bin', sampleBytes(FILE_LIMITS.maxFileBytes + 1), { mimeType: 'application/octet-stream' }),
          'INVALID_ARGUMENTS',
          '/bigger.bin',
        );
        const query = vi.spyOn(pg.Client.prototype, 'query');
        const read = await b.readFile(thread.id, '/big.bin');
        // No value that came back was larger than a chunk.
        const results = await Promise.all(query.mock.results.map((r) => Promise.resolve(r.value).catch(() => undefined)));
        query.mockRestore();
        const sizes = results.flatMap((r) =>
          ((r as pg.QueryResult | undefined)?.rows ?? []).map((row) => (row as { data?: Buffer }).data?.byteLength ?? 0),
        );
        expect(Math.max(...sizes)).toBe(3_000);
        expect(sizes.filter((n) => n > 0)).toHaveLength(4);
        expect(read?.ref.size).toBe(10_000);
        expect(Buffer.from(read!.data).equals(Buffer.from(data))).toBe(true);
        // A file of one chunk or less is one statement.
        await a.writeFile(thread.id, '/small.bin', sampleBytes(3_000), { mimeType: 'application/octet-stream' });
        const one = vi.spyOn(pg.Client.prototype, 'query');
        expect(Buffer.from((await b.readFile(thread.id, '/small.bin'))!.data).equals(Buffer.from(sampleBytes(3_000)))).toBe(true);
        expect(one).toHaveBeenCalledTimes(1);
        one.mockRestore();
      } finally {
        Object.assign(FILE_LIMITS, saved);
      }
    });

    it('[ST-1] a secret that cannot be decrypted names the variable, the thread and where the key comes from', async () => {
      const [a] = stores as [PostgresStore];
      const thread = await a.createThread({ prompt: 'p' });
      await a.setVariables(thread.id, [{ name: 'API_TOKEN', value: 'sk-1', secret: true }]);
      const otherKey = new PostgresStore({ url: databaseUrl(), schema, secretKey: randomBytes(32) });
      stores.push(otherKey);
      const error = await expectStoreError(otherKey.getVariables(thread.id), 'SECRET_DECRYPT_FAILED', '"API_TOKEN"');
      expect(error.message).toContain(thread.id);
      expect(error.message).toContain('AGENTPORT_SECRET_KEY');
      expect(error.message).not.toContain('sk-1');
    });

    /** A thread's row held in a transaction another program never ends, while `store` updates the thread. */
    async function updateWhileRowHeld(store: PostgresStore, schema: string) {
      const thread = await store.createThread({ prompt: 'p' });
      await store.appendMessage(thread.id, { role: 'user', content: 'hello' });
      const holder = new pg.Client({ connectionString: databaseUrl() });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM ${schema}.threads WHERE id = $1 FOR UPDATE`, [thread.id]);
        const started = Date.now();
        await expect(store.updateThread(thread.id, { status: 'idle' })).rejects.toThrow(/statement timeout/);
        expect(Date.now() - started).toBeLessThan(5000);
        await holder.query('ROLLBACK');
        expect((await store.updateThread(thread.id, { status: 'idle' })).status).toBe('idle');
      } finally {
        await holder.end();
        await store.close();
        await dropSchema(schema);
      }
    }

    it('[ST-4] a statement held up by a row lock fails after the statement timeout, and the store goes on', async () => {
      const limited = freshSchema();
      await updateWhileRowHeld(
        new PostgresStore({ url: databaseUrl(), schema: limited, secretKey: KEY, statementTimeoutMs: 300 }),
        limited,
      );
    });

    it('[ST-4] a statement_timeout in the URL wins over the store setting', async () => {
      const limited = freshSchema();
      const url = `${databaseUrl()}${databaseUrl().includes('?') ? '&' : '?'}statement_timeout=300`;
      await updateWhileRowHeld(new PostgresStore({ url, schema: limited, secretKey: KEY, statementTimeoutMs: 600_000 }), limited);
    });

    /** The `synchronous_commit` a store's query connections run with (the pool is private: read through it). */
    async function commitSetting(store: PostgresStore): Promise<string> {
      const pool = (store as unknown as { pool: pg.Pool }).pool;
      const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      return rows[0]!.synchronous_commit;
    }

    it('[ST-2] commits without waiting for the flush by default, and waits when told to', async () => {
      const schema = freshSchema();
      const byDefault = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY });
      const waiting = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY, synchronousCommit: 'on' });
      try {
        await byDefault.open();
        await waiting.open();
        expect(await commitSetting(byDefault)).toBe('off');
        expect(await commitSetting(waiting)).toBe('on');
        // What the docs promise of a commit that was not flushed: another instance reads it at once.
        const thread = await byDefault.createThread({ prompt: 'p' });
        await byDefault.appendMessage(thread.id, { role: 'user', content: 'kept' });
        expect((await waiting.listMessages(thread.id)).map((m) => m.content)).toEqual(['kept']);
      } finally {
        await Promise.all([byDefault.close(), waiting.close()]);
        await dropSchema(schema);
      }
    });

    it('[ST-2] by default keeps a setting someone chose (here in the URL); a value given to the store wins; server sets nothing', async () => {
      const schema = freshSchema();
      const url = `${databaseUrl()}${databaseUrl().includes('?') ? '&' : '?'}options=${encodeURIComponent('-c synchronous_commit=local')}`;
      const byDefault = new PostgresStore({ url, schema, secretKey: KEY });
      const given = new PostgresStore({ url, schema, secretKey: KEY, synchronousCommit: 'remote_write' });
      const left = new PostgresStore({ url: databaseUrl(), schema, secretKey: KEY, synchronousCommit: 'server' });
      try {
        expect(await commitSetting(byDefault)).toBe('local');
        expect(await commitSetting(given)).toBe('remote_write');
        expect(await commitSetting(left)).toBe('on');
      } finally {
        await Promise.all([byDefault.close(), given.close(), left.close()]);
        await dropSchema(schema);
      }
    });

    it('refuses a database migrated by a newer agentport', async () => {
      const newer = freshSchema();
      const store = new PostgresStore({ url: databaseUrl(), schema: newer, secretKey: KEY });
      await store.open();
      await store.close();
      await sql(`INSERT INTO ${newer}.migrations (version, description) VALUES (999, 'from the future')`);
      const later = new PostgresStore({ url: databaseUrl(), schema: newer, secretKey: KEY });
      await expectStoreError(later.open(), 'UNSUPPORTED_VERSION', 'version 999');
      await later.close();
      await dropSchema(newer);
    });
  });
});

describe('PostgresStore without an answering server', () => {
  it('[ST-4] refuses a statement time limit that is not a number of milliseconds, naming the variable', async () => {
    const flags = { store: 'postgres', databaseUrl: 'postgres://postgres@127.0.0.1:1/none' };
    await expectStoreError(
      Promise.resolve().then(() => chooseStore(flags, '.agentport', { AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS: 'soon' })),
      'INVALID_ARGUMENTS',
      'AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds',
    );
  });

  it('[ST-2] refuses a synchronous_commit PostgreSQL does not know, naming the variable or the option', () => {
    const flags = { store: 'postgres', databaseUrl: 'postgres://postgres@127.0.0.1:1/none' };
    expect(() => chooseStore(flags, '.agentport', { AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT: 'sometimes' })).toThrow(
      'AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT must be one of off, on, local, remote_write, remote_apply, server, got "sometimes"',
    );
    expect(chooseStore(flags, '.agentport', { AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT: 'on' }).synchronousCommit).toBe('on');
    expect(chooseStore(flags, '.agentport', {}).synchronousCommit).toBeUndefined();
    expect(() => new PostgresStore({ url: flags.databaseUrl, secretKey: KEY, synchronousCommit: 'on; DROP TABLE x' as 'on' })).toThrow(
      'PostgresStore synchronousCommit must be one of off, on, local, remote_write, remote_apply, server',
    );
  });

  it('[ST-4] a failed connection names no part of a URL that may hold its password where a host should be', async () => {
    const store = new PostgresStore({ url: 'postgres://agentport:12/34@127.0.0.1:1/agentport', secretKey: KEY, connectTimeoutMs: 2000 });
    const error = await store.open().then(
      () => new Error('connected'),
      (caught: unknown) => caught as Error,
    );
    expect(error.message).toContain('cannot connect to PostgreSQL at the configured database');
    expect(error.message).not.toMatch(/12|34/);
    await store.close().catch(() => {});
  });

  it('[ST-4] gives up connecting after the connect timeout, naming the database', async () => {
    // A server that accepts connections and never says a word.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const store = new PostgresStore({ url: `postgres://postgres@127.0.0.1:${port}/test`, secretKey: KEY, connectTimeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(store.open()).rejects.toThrow(`cannot connect to PostgreSQL at 127.0.0.1:${port}/test: `);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await store.close().catch(() => {});
      silent.close();
    }
  });
});
