/** Server logging: see src/log.ts (stderr only). */
export { log } from '../log.js';
