/**
 * Which store a server uses: `file` (default: the data folder), `memory`
 * (nothing kept after the process ends) or `postgres` (a database several
 * instances share). The store's code is loaded only when chosen.
 */
import { AgentportError } from '../errors.js';
import { log } from '../log.js';
import type { Store } from './types.js';

const STORE_KINDS = ['file', 'memory', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface StoreChoice {
  kind: StoreKind;
  /** The data folder (file store; also where a generated secret key is kept). */
  dataDir: string;
  /** Required for `postgres`. */
  databaseUrl?: string;
  /** PostgreSQL schema for agentport's tables (default `agentport`). */
  databaseSchema?: string;
}

/** Reads a `--store` value (or AGENTPORT_STORE), naming what is accepted. */
export function parseStoreKind(value: string, source: string): StoreKind {
  if ((STORE_KINDS as readonly string[]).includes(value)) return value as StoreKind;
  throw new AgentportError('INVALID_ARGUMENTS', `${source} must be one of ${STORE_KINDS.join(', ')}, got "${value}"`);
}

/** The longest delay a timer takes (beyond, Node fires it after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Milliseconds from a variable of the environment: a whole number, 0 or more; undefined when unset. */
function millisecondsFrom(env: NodeJS.ProcessEnv, name: string, zeroMeans: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      `${name} must be a whole number of milliseconds up to ${MAX_TIMER_MS} (0 ${zeroMeans}), got "${raw}"`,
    );
  }
  return value;
}

/** Settings given to a store that has no use for them are said to be ignored, not dropped silently. */
function warnUnusedSettings(choice: StoreChoice, env: NodeJS.ProcessEnv): void {
  if (choice.kind !== 'file' && env.AGENTPORT_FSYNC_WITHIN_MS) {
    log.warn(`AGENTPORT_FSYNC_WITHIN_MS ignored: the ${choice.kind} store writes no files of its own (--store file uses it)`);
  }
  if (choice.kind === 'postgres') return;
  const given = [
    choice.databaseUrl !== undefined ? 'the database URL' : undefined,
    choice.databaseSchema !== undefined ? 'the database schema' : undefined,
    env.AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS ? 'AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS' : undefined,
  ].filter((setting) => setting !== undefined);
  if (given.length) log.warn(`${given.join(', ')} ignored: the ${choice.kind} store has no database (--store postgres uses them)`);
}

/** @param env where AGENTPORT_FSYNC_WITHIN_MS (file) and AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS (PostgreSQL) are read */
export async function openStore(choice: StoreChoice, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  warnUnusedSettings(choice, env);
  switch (choice.kind) {
    case 'file': {
      const fsyncWithinMs = millisecondsFrom(env, 'AGENTPORT_FSYNC_WITHIN_MS', 'for as soon as the server is free');
      const { FileStore } = await import('./fileStore.js');
      return new FileStore({ dir: choice.dataDir, ...(fsyncWithinMs !== undefined ? { fsyncWithinMs } : {}) });
    }
    case 'memory': {
      const { MemoryStore } = await import('./memoryStore.js');
      return new MemoryStore();
    }
    case 'postgres': {
      if (!choice.databaseUrl) {
        throw new AgentportError(
          'INVALID_ARGUMENTS',
          '--store postgres needs a database: set AGENTPORT_DATABASE_URL (or --database-url), e.g. postgres://user@host:5432/db',
        );
      }
      const statementTimeoutMs = millisecondsFrom(env, 'AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS', 'for no limit');
      const { PostgresStore } = await import('./postgres/postgresStore.js');
      const store = new PostgresStore({
        url: choice.databaseUrl,
        keyDir: choice.dataDir,
        ...(statementTimeoutMs !== undefined ? { statementTimeoutMs } : {}),
        ...(choice.databaseSchema ? { schema: choice.databaseSchema } : {}),
      });
      await store.open();
      return store;
    }
  }
}
