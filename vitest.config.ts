import { defineConfig } from 'vitest/config';
import { TIERS } from './test/setup/tiers.js';

// The suite in four tiers (test/setup/tiers.ts says which file falls in which, by folder and name, so a new
// file falls into one without an edit here). `npm test` runs them all, one group after another in the order
// below; `npm run test:unit` (and :int, :e2e, :soak) runs one.
//
// Groups run one after another (vitest's sequence.groupOrder) because each has its own number of workers, and
// a group's workers are sized for what its tests wait on. Measured in a full run on this 2-core machine
// (test-results/vitest.json of the run before the tiers): CPU was 32-50% of wall time, so the tiers whose
// tests mostly wait on real time (ptys, git, sockets, timers) get more workers than cores; the soak tier's
// chaos and crash loops run alone, as the runs they are, with the cores to themselves.
const shared = {
  // No test files is a failure, never a silent pass.
  passWithNoTests: false as const,
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // A disposable added to a disposed store is said on the console in every test (test/setup/lateAdds.ts).
  setupFiles: ['test/setup/lateAdds.ts'],
};

export default defineConfig({
  test: {
    ...shared,
    // A home folder of the run's own, for every worker of every tier (test/setup/testMachine.ts); the browser
    // is the e2e tier's own set-up, so a run without e2e files never unpacks one.
    globalSetup: ['test/setup/testMachine.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: [...TIERS.unit.include],
          exclude: [...TIERS.unit.exclude],
          // Pure code and no processes: in-process threads start faster than forks, and with nothing to wait
          // on, one worker a core.
          pool: 'threads',
          maxWorkers: TIERS.unit.workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'int',
          include: [...TIERS.int.include],
          exclude: [...TIERS.int.exclude],
          maxWorkers: TIERS.int.workers,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'e2e',
          include: [...TIERS.e2e.include],
          exclude: [...TIERS.e2e.exclude],
          globalSetup: ['test/setup/testBrowser.ts'],
          maxWorkers: TIERS.e2e.workers,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...shared,
          name: 'soak',
          include: [...TIERS.soak.include],
          exclude: [...TIERS.soak.exclude],
          maxWorkers: TIERS.soak.workers,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
