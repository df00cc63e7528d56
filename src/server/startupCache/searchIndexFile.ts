/**
 * The search index saved beside the start-up cache,
 * `<data dir>/cache/search-v2.bin`: a start served from the cache restores
 * the index of its tools instead of building it (see toolSearchSurface.ts).
 * The file is a label (a 32-bit length, then JSON naming agentport's version
 * and the start-up cache the index was built from, so an index of another
 * catalogue is never used) followed by the index's own bytes
 * (search/savedIndex.ts). It is written once built, when there was none to
 * restore, to a temporary file renamed into place.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { log } from '../../log.js';
import type { SavedSearchIndex } from '../toolSearchSurface.js';
import { writeFileAtomically } from './cacheFile.js';
import { VERSION } from '../version.js';

const SEARCH_INDEX_FILE = 'search-v2.bin';
/** What earlier versions saved (JSON): removed when the index is saved again. */
const OLDER_FILES = ['search-v1.json'];

interface Label {
  agentport: string;
  /** The id of the start-up cache whose tools were indexed. */
  catalog: string;
}

/** The saved index of the tools of the start-up cache `catalogId`. */
export function savedSearchIndex(dataDir: string, catalogId: string): SavedSearchIndex {
  const file = path.join(dataDir, 'cache', SEARCH_INDEX_FILE);
  return {
    read() {
      try {
        const bytes = readFileSync(file);
        const labelEnd = 4 + bytes.readUInt32LE(0);
        const label = JSON.parse(bytes.toString('utf8', 4, labelEnd)) as Partial<Label>;
        return label.agentport === VERSION && label.catalog === catalogId ? bytes.subarray(labelEnd) : undefined;
      } catch {
        return undefined;
      }
    },
    write(index) {
      // Padded with spaces to a multiple of 4 bytes: the index then starts at one, and its integers are read in place.
      const text = JSON.stringify({ agentport: VERSION, catalog: catalogId } satisfies Label);
      const label = Buffer.from(text.padEnd(text.length + ((4 - (Buffer.byteLength(text) % 4)) % 4)));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(label.length);
      try {
        writeFileAtomically(file, Buffer.concat([length, label, index]), OLDER_FILES);
      } catch (error) {
        log.warn(`search index not saved (${error instanceof Error ? error.message : String(error)}): the next start builds it again`);
      }
    },
  };
}
