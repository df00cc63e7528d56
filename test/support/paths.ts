import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI: e2e tests run what users run (npm test builds first). */
export const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
export const EXAMPLE_AGENTS = path.join(REPO_ROOT, 'agents');
/** The tools the example folder exposes, in the order tools/list gives them (before the run tools). */
export const EXAMPLE_TOOLS = ['copy_desk', 'docs_reader', 'editor_in_chief', 'fact_finder', 'faq', 'summarize', 'support', 'triage_ticket'];
/** The run tools listed after the exposed ones while the call budget is on. */
export const RUN_TOOLS = ['run_wait', 'run_status', 'run_cancel'];
export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures');
