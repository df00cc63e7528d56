/**
 * The values of PostgreSQL's `synchronous_commit` the store accepts, apart from
 * the store's code so that checking a setting does not load the driver.
 * `server` is agentport's own: set nothing, leaving the database's setting.
 */
import { AgentportError } from '../../errors.js';

export const SYNCHRONOUS_COMMIT_VALUES = ['off', 'on', 'local', 'remote_write', 'remote_apply', 'server'] as const;
export type SynchronousCommit = (typeof SYNCHRONOUS_COMMIT_VALUES)[number];

/** `value` as a setting, or INVALID_ARGUMENTS naming `source` (it goes into a SET statement: nothing else may). */
export function synchronousCommitFrom(value: string, source: string): SynchronousCommit {
  if ((SYNCHRONOUS_COMMIT_VALUES as readonly string[]).includes(value)) return value as SynchronousCommit;
  throw new AgentportError(
    'INVALID_ARGUMENTS',
    `${source} must be one of ${SYNCHRONOUS_COMMIT_VALUES.join(', ')}, got ${JSON.stringify(value)}`,
  );
}

/**
 * What a new query connection runs when no value was chosen: `off` where nothing else chose one. Commits then answer
 * before their flush, which follows within three times the server's `wal_writer_delay`: the file store's group
 * commit, in the database's terms (docs/deployment.md, "Durability"). A setting someone made (the server's
 * configuration, `ALTER ROLE` / `ALTER DATABASE ... SET`, the URL's `options`) is theirs and stays, and so does the
 * default `on` of a server with synchronous standbys, whose commits must wait for them.
 */
export const UNLESS_CHOSEN_OFF = `SELECT set_config('synchronous_commit', 'off', false)
  WHERE (SELECT source FROM pg_settings WHERE name = 'synchronous_commit') = 'default'
    AND current_setting('synchronous_standby_names') = ''`;
