/**
 * The PostgreSQL store's schema, as numbered migrations applied in order at
 * start. Each runs once, in a transaction, under an advisory lock, so several
 * instances starting together against one database apply it once. A database
 * already migrated past what this version knows is refused
 * (UNSUPPORTED_VERSION) rather than written by older code.
 *
 * JSON is kept as text, not jsonb: stored records come back byte for byte as
 * they were written (jsonb reorders keys and refuses `\u0000` in strings).
 *
 * A migration adds; it never changes the type of a column a statement returns:
 * the store prepares its statements once per connection, and an instance still
 * running the previous version would get "cached plan must not change result
 * type" on every connection it holds. Add a new column instead.
 */
import type { PoolClient } from 'pg';
import { AgentportError } from '../../errors.js';

interface Migration {
  version: number;
  description: string;
  sql: (schema: string) => string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'threads, messages, files, variables',
    sql: (s) => `
      CREATE TABLE ${s}.threads (
        id text PRIMARY KEY,
        record text NOT NULL,
        status text NOT NULL,
        created_at text NOT NULL,
        -- The highest seq ever assigned in the thread (deleted messages included): seqs are never reused.
        last_seq bigint NOT NULL DEFAULT 0
      );
      CREATE INDEX threads_status ON ${s}.threads (status);
      CREATE TABLE ${s}.messages (
        thread_id text NOT NULL REFERENCES ${s}.threads (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        id text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (thread_id, seq)
      );
      CREATE INDEX messages_by_id ON ${s}.messages (thread_id, id);
      CREATE TABLE ${s}.files (
        thread_id text NOT NULL REFERENCES ${s}.threads (id) ON DELETE CASCADE,
        path text NOT NULL,
        ref text NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (thread_id, path)
      );
      CREATE TABLE ${s}.variables (
        thread_id text NOT NULL REFERENCES ${s}.threads (id) ON DELETE CASCADE,
        name text NOT NULL,
        position integer NOT NULL,
        entry text NOT NULL,
        PRIMARY KEY (thread_id, name)
      );
    `,
  },
];

/** Brings the schema up to the latest migration. */
export async function migrate(client: PoolClient, schema: string): Promise<void> {
  // One instance migrates at a time; the lock is per schema and released with the transaction.
  await client.query('BEGIN');
  try {
    // Waiting for another instance's migration, or a long one, is not a stuck statement: no time limit here.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agentport-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number }>(`SELECT coalesce(max(version), 0) AS version FROM ${schema}.migrations`);
    const current = Number(rows[0]?.version ?? 0);
    const latest = MIGRATIONS.at(-1)!.version;
    if (current > latest) {
      throw new AgentportError(
        'UNSUPPORTED_VERSION',
        `the database schema "${schema}" is at version ${current}, newer than this agentport knows (${latest}): upgrade agentport`,
      );
    }
    for (const migration of MIGRATIONS.filter((m) => m.version > current)) {
      await client.query(migration.sql(schema));
      await client.query(`INSERT INTO ${schema}.migrations (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
