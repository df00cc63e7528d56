import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI: e2e tests run what users run (npm test builds first). */
export const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
export const EXAMPLE_AGENTS = path.join(REPO_ROOT, 'agents');
export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures');
