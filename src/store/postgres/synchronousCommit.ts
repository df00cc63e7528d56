/**
 * The values of PostgreSQL's `synchronous_commit` the store accepts, apart from
 * the store's code so that checking a setting does not load the driver.
 * `server` is agentport's own: set nothing, leaving the database's setting.
 */
export const SYNCHRONOUS_COMMIT_VALUES = ['off', 'on', 'local', 'remote_write', 'remote_apply', 'server'] as const;
export type SynchronousCommit = (typeof SYNCHRONOUS_COMMIT_VALUES)[number];

/**
 * Commits answer before their flush, which follows within three times the server's `wal_writer_delay`: the file
 * store's group commit, in the database's terms (docs/deployment.md, "Durability").
 */
export const DEFAULT_SYNCHRONOUS_COMMIT: SynchronousCommit = 'off';
