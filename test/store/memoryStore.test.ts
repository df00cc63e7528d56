import { MemoryStore } from '../../src/store/memoryStore.js';
import { describeStoreContract } from './contract.js';

describeStoreContract('MemoryStore', async () => ({ store: new MemoryStore(), cleanup: async () => undefined }));
