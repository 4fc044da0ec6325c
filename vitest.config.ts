import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'e2e/**/*.test.ts'],
    // A home folder of the run's own and a browser, for every worker (test/setup/testMachine.ts).
    globalSetup: ['test/setup/testMachine.ts'],
    // No test files is a failure, never a silent pass.
    passWithNoTests: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: pty and crash tests are real processes, so too much parallelism only adds noise.
    maxWorkers: 2,
  },
});
