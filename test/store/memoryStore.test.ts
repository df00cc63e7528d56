import { MemoryStore } from '../../src/store/memoryStore.js';
import type { AttachmentRef } from '../../src/store/types.js';
import { describeStoreContract } from './contract.js';

/** The store's own map of threads, which writeFile's checks guard (private to the class, reached here on purpose). */
type Threads = Map<string, { files: Map<string, { data: Uint8Array; ref: AttachmentRef }> }>;

describeStoreContract('MemoryStore', async () => {
  const store = new MemoryStore();
  return {
    store,
    cleanup: async () => undefined,
    plantFile: async (threadId, ref, data) => {
      (store as unknown as { threads: Threads }).threads.get(threadId)!.files.set(ref.path, { data, ref });
      return true;
    },
  };
});
