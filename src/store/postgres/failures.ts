/**
 * How the PostgreSQL store tells failures apart, and names the database in
 * its messages without quoting a password.
 */
import { parse as parseConnectionString } from 'pg-connection-string';
import { AgentportError, errorMessage } from '../../errors.js';

/** SQLSTATE query_canceled: what the statement time limit raises. */
const STATEMENT_TIMEOUT = '57014';

/** Failures that reached no database: waiting for a free pooled connection, or for a new one, ran out. */
const NO_CONNECTION = ['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout'];

/**
 * Whether a batch may have failed for one of the writes it carried, so that each is worth sending alone: anything
 * but the statement time limit (PostgreSQL cancelled it, nothing was written) and no connection within the connect
 * timeout, which would only make each write wait for the same failure in turn. A connection lost on the way is sent
 * again: the batch may have been written, which the writes sent alone find.
 */
export function refusedForContent(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === STATEMENT_TIMEOUT) return false;
  return !(typeof message === 'string' && NO_CONNECTION.some((text) => message.startsWith(text)));
}

/**
 * Host, port and database of a connection string, for messages. A URL with an "@" past its authority (a user name
 * or password holding an unencoded "@" or "/") is not quoted at all: what a parser reads as host or database there
 * may be part of the password.
 */
export function databaseLabel(url: string): string {
  const scheme = url.indexOf('://');
  const rest = scheme < 0 ? url : url.slice(scheme + 3);
  const authorityEnd = rest.search(/[/?#]/);
  if (authorityEnd >= 0 && rest.indexOf('@', authorityEnd) >= 0) return 'the configured database (its URL does not read as user@host)';
  try {
    const { host, port, database } = parseConnectionString(url);
    return `${host || 'localhost'}:${port || '5432'}/${database ?? ''}`;
  } catch {
    return 'the configured database';
  }
}

/** A connection that could not be made (refused, timed out, authentication failed), naming the database as {@link databaseLabel} does. */
export function cannotConnect(url: string, error: unknown): AgentportError {
  return new AgentportError('INTERNAL', `cannot connect to PostgreSQL at ${databaseLabel(url)}: ${errorMessage(error)}`, undefined, {
    cause: error,
  });
}
