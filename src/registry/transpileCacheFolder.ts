/**
 * The folder of babel's cached output under the cache directory (transpile.ts). Its name changes whenever what
 * transpile.ts emits does, so no entry of an earlier transform is served. A module of its own: the CLI names the
 * folder without loading the transpiler.
 */
export const TRANSPILE_CACHE_FOLDER = 'babel-3';
