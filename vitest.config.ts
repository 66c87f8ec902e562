import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Service-level suites `npm test` runs a second time on PostgreSQL (COUNTERSIGN_TEST_STORE=postgres:
 * each embedded service on a fresh database; README "Tests on PostgreSQL" says why these). The
 * PostgreSQL-only suites (store contract, postgres-store, replicas) run in the first project.
 */
export const POSTGRES_SUITES = [
  'test/contract-seed.test.ts',
  'test/turnkey-clients.test.ts',
  'test/reservations.test.ts',
  'test/policies.test.ts',
  'test/root-quorum.test.ts',
  'test/e2e-consensus.test.ts',
  'test/eth-send.test.ts',
  'test/keyed-retry.test.ts',
  'test/users.test.ts',
  'test/list-activities-filters.test.ts',
  'test/webhooks.test.ts',
  'test/public-api.test.ts',
  'test/admin-activities.test.ts',
  'test/export.test.ts',
  'test/import.test.ts',
  'test/auth-otp.test.ts',
];

const shared = {
  // Integration suites start servers and anvil; forks keep native addons out of worker threads.
  pool: 'forks' as const,
  testTimeout: 60_000,
  // Setup hooks init a data directory and start `serve` as a child process (startServe gives it
  // 90 s); on a loaded two-core runner that has taken over 60 s. A guard against a hang only.
  hookTimeout: 180_000,
};

export default defineConfig({
  test: {
    ...shared,
    // vitest's default in run mode is one worker fewer than the cores: one file at a time on two.
    // Most suites wait on servers, chains and the disk rather than on the CPU, so two files at a
    // time there cut a fresh clone's CI run from ~24 to ~10 min.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        test: {
          ...shared,
          name: 'sqlite',
          include: ['src/**/*.test.ts', 'chains/**/*.test.ts', 'test/**/*.test.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'postgres',
          include: POSTGRES_SUITES,
          env: { COUNTERSIGN_TEST_STORE: 'postgres' },
        },
      },
    ],
  },
});
