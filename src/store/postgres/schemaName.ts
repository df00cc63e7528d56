/** PostgreSQL schema names agentport accepts: unquoted identifiers of lowercase letters, digits and `_`. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** What a schema name must be, for error messages. */
export const SCHEMA_NAME_RULE = 'lowercase letters, digits and "_", not starting with a digit, at most 63 characters';
