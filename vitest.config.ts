import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'chains/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration suites start servers and anvil; forks keep native addons out of worker threads.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
