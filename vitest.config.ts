import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The built package, which test/support/cli.ts runs in the test process. */
const DIST = fileURLToPath(new URL('./dist/', import.meta.url));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // What is polled for (a spawned server's first request, say) can take seconds on a loaded 2-core machine.
    expect: { poll: { timeout: 10_000 } },
    // e2e tests spawn servers and spend much of their time waiting on them: three workers keep CI's two cores
    // busy (113 s against 137 s with two, for about the same CPU time).
    pool: 'forks',
    maxWorkers: 3,
    // Test files share their worker's module cache: importing the runtime again for every file was most of the
    // in-process tests' time. Tests restore what they change of process state (env, cwd, handlers).
    isolate: false,
    // Loaded by Node as it is, not transformed by Vite: the CLI runs as the binary does, and each test file
    // that runs it does not spend a second transforming the whole package first.
    server: { deps: { external: [new RegExp(`^${DIST.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)] } },
    // Every agentport the tests run (spawned or in the test process) shares one transpile cache (keyed by
    // content) instead of compiling the fixture folders again in each test's fresh data folder.
    env: { AGENTPORT_CACHE_DIR: fileURLToPath(new URL('./node_modules/.cache/agentport-test', import.meta.url)) },
  },
});
