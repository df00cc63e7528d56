/**
 * The search index saved beside the start-up cache,
 * `<data dir>/cache/search-v1.json`: a start served from the cache restores
 * the index of its tools instead of building it (see toolSearchSurface.ts).
 * It names the start-up cache it was built from (the cache's id), so an
 * index of another catalogue is never used; it is written once built, when
 * there was none to restore. Written to a temporary file and renamed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { log } from '../../log.js';
import type { SavedSearchIndex } from '../toolSearchSurface.js';
import { writeJsonAtomically } from './cacheFile.js';
import { VERSION } from '../version.js';

const SEARCH_INDEX_FILE = 'search-v1.json';

interface SearchIndexFile {
  agentport: string;
  /** The id of the start-up cache whose tools were indexed. */
  catalog: string;
  index: unknown;
}

/** The saved index of the tools of the start-up cache `catalogId`. */
export function savedSearchIndex(dataDir: string, catalogId: string): SavedSearchIndex {
  const file = path.join(dataDir, 'cache', SEARCH_INDEX_FILE);
  return {
    read() {
      try {
        const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<SearchIndexFile>;
        return saved.agentport === VERSION && saved.catalog === catalogId ? saved.index : undefined;
      } catch {
        return undefined;
      }
    },
    write(index) {
      const content: SearchIndexFile = { agentport: VERSION, catalog: catalogId, index };
      try {
        writeJsonAtomically(file, content);
      } catch (error) {
        log.warn(`search index not saved (${error instanceof Error ? error.message : String(error)}): the next start builds it again`);
      }
    },
  };
}
