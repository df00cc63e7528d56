import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // What is polled for (a spawned server's first request, say) can take seconds on a loaded 2-core machine.
    expect: { poll: { timeout: 10_000 } },
    // e2e tests spawn servers; two cores are what CI has.
    pool: 'forks',
    maxWorkers: 2,
    // Test files share their worker's module cache: importing the runtime again for every file was most of the
    // in-process tests' time. Tests restore what they change of process state (env, cwd, handlers).
    isolate: false,
    // Every spawned agentport shares one transpile cache (keyed by content) instead of compiling the
    // fixture folders again in each test's fresh data folder.
    env: { AGENTPORT_CACHE_DIR: fileURLToPath(new URL('./node_modules/.cache/agentport-test', import.meta.url)) },
  },
});
