/**
 * Which store a server uses: `file` (default: the data folder), `memory`
 * (nothing kept after the process ends) or `postgres` (a database several
 * instances share). The store's code is loaded only when chosen.
 */
import { AgentportError } from '../errors.js';
import { log } from '../log.js';
import { SCHEMA_NAME, SCHEMA_NAME_RULE } from './postgres/schemaName.js';
import { synchronousCommitFrom, type SynchronousCommit } from './postgres/synchronousCommit.js';
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
  /** File store: AGENTPORT_FSYNC_WITHIN_MS. */
  fsyncWithinMs?: number;
  /** PostgreSQL: AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS. */
  statementTimeoutMs?: number;
  /** PostgreSQL: AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT. */
  synchronousCommit?: SynchronousCommit;
}

/** The store flags of `serve` and `run`; each falls back to its variable of the environment. */
export interface StoreFlags {
  store?: string;
  databaseUrl?: string;
  databaseSchema?: string;
}

/** Reads a `--store` value (or AGENTPORT_STORE), naming what is accepted. */
function parseStoreKind(value: string, source: string): StoreKind {
  if ((STORE_KINDS as readonly string[]).includes(value)) return value as StoreKind;
  throw new AgentportError('INVALID_ARGUMENTS', `${source} must be one of ${STORE_KINDS.join(', ')}, got "${value}"`);
}

/** A flag's value when given (even empty: a flag given empty is a mistake), else its variable's unless empty. */
function setting(
  flag: string | undefined,
  flagName: string,
  env: NodeJS.ProcessEnv,
  variable: string,
): { value: string; source: string } | undefined {
  if (flag !== undefined) return { value: flag, source: flagName };
  const value = env[variable];
  return value ? { value, source: variable } : undefined;
}

/**
 * The store the flags and the environment ask for, with its settings checked: every mistake (an unknown
 * store, a database URL that is not one, a bad schema name or time) is said here, naming the flag or the
 * variable, before anything is opened. Settings the chosen store does not use are warned about.
 */
export function chooseStore(flags: StoreFlags, dataDir: string, env: NodeJS.ProcessEnv = process.env): StoreChoice {
  const kind = setting(flags.store, '--store', env, 'AGENTPORT_STORE');
  const url = setting(flags.databaseUrl, '--database-url', env, 'AGENTPORT_DATABASE_URL');
  const schema = setting(flags.databaseSchema, '--database-schema', env, 'AGENTPORT_DATABASE_SCHEMA');
  const choice: StoreChoice = { kind: kind ? parseStoreKind(kind.value, kind.source) : 'file', dataDir };
  if (url) choice.databaseUrl = url.value;
  if (schema) choice.databaseSchema = schema.value;
  warnUnusedSettings(choice, env);
  if (choice.kind === 'file') {
    const fsyncWithinMs = millisecondsFrom(env, 'AGENTPORT_FSYNC_WITHIN_MS', 'for as soon as the server is free');
    if (fsyncWithinMs !== undefined) choice.fsyncWithinMs = fsyncWithinMs;
  }
  if (choice.kind !== 'postgres') return choice;
  if (!url?.value) {
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      '--store postgres needs a database: set AGENTPORT_DATABASE_URL (or --database-url), e.g. postgres://user@host:5432/db',
    );
  }
  checkDatabaseUrl(url.value, url.source);
  if (schema && !SCHEMA_NAME.test(schema.value)) {
    throw new AgentportError('INVALID_ARGUMENTS', `${schema.source} must be ${SCHEMA_NAME_RULE}, got ${JSON.stringify(schema.value)}`);
  }
  const statementTimeoutMs = millisecondsFrom(env, 'AGENTPORT_DATABASE_STATEMENT_TIMEOUT_MS', 'for no limit');
  if (statementTimeoutMs !== undefined) choice.statementTimeoutMs = statementTimeoutMs;
  const synchronousCommit = env.AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT;
  if (synchronousCommit) choice.synchronousCommit = synchronousCommitFrom(synchronousCommit, 'AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT');
  return choice;
}

/**
 * A connection string the driver can read: a `postgres://`, `postgresql://` or `socket:` URL (one with no host, such
 * as `postgres://user@/db?host=/var/run/postgresql`, included), or a socket folder (`/var/run/postgresql db`). Only
 * the form is checked; the value itself is not quoted (it may hold a password).
 */
function checkDatabaseUrl(url: string, source: string): void {
  if (/^(postgres|postgresql|socket):/i.test(url) || url.startsWith('/')) return;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  throw new AgentportError(
    'INVALID_ARGUMENTS',
    `${source} must be a PostgreSQL URL such as postgres://user:password@host:5432/db${scheme ? `, not a ${scheme}: URL` : ' (the value given is not a URL)'}`,
  );
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
    env.AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT ? 'AGENTPORT_DATABASE_SYNCHRONOUS_COMMIT' : undefined,
  ].filter((setting) => setting !== undefined);
  if (given.length) log.warn(`${given.join(', ')} ignored: the ${choice.kind} store has no database (--store postgres uses them)`);
}

/** Opens the store chosen by {@link chooseStore}: its code is loaded now; a database is reached and migrated. */
export async function openStore(choice: StoreChoice): Promise<Store> {
  switch (choice.kind) {
    case 'file': {
      const { FileStore } = await import('./fileStore.js');
      return new FileStore({ dir: choice.dataDir, ...(choice.fsyncWithinMs !== undefined ? { fsyncWithinMs: choice.fsyncWithinMs } : {}) });
    }
    case 'memory': {
      const { MemoryStore } = await import('./memoryStore.js');
      return new MemoryStore();
    }
    case 'postgres': {
      const { PostgresStore } = await import('./postgres/postgresStore.js');
      const store = new PostgresStore({
        url: choice.databaseUrl!,
        keyDir: choice.dataDir,
        ...(choice.statementTimeoutMs !== undefined ? { statementTimeoutMs: choice.statementTimeoutMs } : {}),
        ...(choice.synchronousCommit !== undefined ? { synchronousCommit: choice.synchronousCommit } : {}),
        ...(choice.databaseSchema ? { schema: choice.databaseSchema } : {}),
      });
      await store.open();
      return store;
    }
  }
}
