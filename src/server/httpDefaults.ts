/** Where `serve --http` listens by default (kept apart so the CLI can show it without loading HTTP code). */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3333;
