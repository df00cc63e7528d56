/** How the PostgreSQL store tells failures apart and names its database (no server needed). */
import { describe, expect, it, vi } from 'vitest';
import { chooseStore, openStore } from '../../src/store/open.js';
import { databaseLabel, refusedForContent } from '../../src/store/postgres/failures.js';

describe('PostgreSQL failures', () => {
  it('[ST-4] sends a failed batch again write by write unless it failed whatever it carried', () => {
    const failed = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
    expect(refusedForContent(failed('duplicate key value violates unique constraint', '23505'))).toBe(true);
    expect(refusedForContent(new RangeError('Invalid string length'))).toBe(true);
    expect(refusedForContent(failed('Connection terminated unexpectedly'))).toBe(true);
    expect(refusedForContent(failed('read ECONNRESET', 'ECONNRESET'))).toBe(true);
    expect(refusedForContent(failed('canceling statement due to statement timeout', '57014'))).toBe(false);
    expect(refusedForContent(failed('timeout exceeded when trying to connect'))).toBe(false);
    expect(refusedForContent(failed('Connection terminated due to connection timeout'))).toBe(false);
  });

  it('[ST-4] names host, port and database, never user or password', () => {
    expect(databaseLabel('postgres://db.internal/agentport')).toBe('db.internal:5432/agentport');
    expect(databaseLabel('postgresql://agentport:s3cret@db.internal:6543/agentport')).toBe('db.internal:6543/agentport');
    expect(databaseLabel('postgres://agentport@/agentport?host=/var/run/postgresql')).toBe('/var/run/postgresql:5432/agentport');
  });

  it('[ST-4] quotes nothing of a URL with an "@" past its authority: it may hold the password', () => {
    for (const url of [
      'postgres://agentport:12/34@db.internal/agentport',
      'postgres://admin@srv:1234/abcd@srv.example.com/db',
      'postgres://agentport:pa?ss@db.internal/agentport',
    ]) {
      const label = databaseLabel(url);
      expect(label).toBe('the configured database (its URL does not read as user@host)');
    }
  });

  it('[ST-4] takes every connection string the driver reads (socket folders and host-less URLs too), and refuses other URLs', () => {
    for (const url of [
      'postgres://u:p@db.internal:5432/agents',
      'postgresql://u@db.internal/agents?sslmode=require',
      'postgres://postgres@/test?host=/var/run/postgresql',
      'socket:/var/run/postgresql?db=test',
      '/var/run/postgresql test',
    ]) {
      expect(chooseStore({ store: 'postgres', databaseUrl: url }, '.agentport', {}).databaseUrl).toBe(url);
    }
    expect(() => chooseStore({ store: 'postgres', databaseUrl: 'mysql://u@db/x' }, '.agentport', {})).toThrow(
      '--database-url must be a PostgreSQL URL such as postgres://user:password@host:5432/db, not a mysql: URL',
    );
    expect(() => chooseStore({ store: 'postgres' }, '.agentport', { AGENTPORT_DATABASE_URL: 'db.internal' })).toThrow(
      'AGENTPORT_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/db (the value given is not a URL)',
    );
  });

  it('[ST-4] says database settings given to a store without a database are ignored', async () => {
    const lines: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const store = await openStore(
        chooseStore({ store: 'memory', databaseUrl: 'postgres://db.internal/agentport' }, '.agentport', {
          AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS: '5000',
          AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT: 'on',
        }),
      );
      await store.close?.();
      await openStore(chooseStore({ store: 'memory' }, '.agentport', {}));
    } finally {
      stderr.mockRestore();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'the database URL, AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS, AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT ignored: the memory store has no database',
    );
  });
});
