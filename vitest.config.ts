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
  },
});
