/**
 * The PostgreSQL server the tests use: AGENTPORT_TEST_DATABASE_URL, by
 * default the one the development and CI machines run.
 */
import pg from 'pg';

export function databaseUrl(): string {
  return process.env.AGENTPORT_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** One statement on a connection of its own, as another program would run it; its rows. */
export async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Removes a schema a test made, with everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/** Whether a server answers there (quickly: a missing server must not slow the suite down). */
export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
