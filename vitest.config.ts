import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn servers; two cores are what CI has.
    pool: 'forks',
    maxWorkers: 2,
  },
});
