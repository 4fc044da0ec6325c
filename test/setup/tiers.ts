/**
 * Which tier a test file runs in, by its folder and name only, so a new file falls into one without an edit
 * (vitest.config.ts makes one vitest project of each; test/scripts/tiers.test.ts checks every file of today
 * falls into exactly one):
 *
 * - e2e:  every test under e2e/ — the window in Chromium, the only tier that prepares a browser.
 * - soak: a file whose name says it loops — `*.soak.test.ts` (crash loops: SIGKILL at random moments),
 *         `*Chaos*.test.ts` (chaos runs), `*.model.test.ts` (model checks of thousands of sequences) and
 *         `*.fuzz.test.ts` — anywhere under test/.
 * - unit: test/shared, test/renderer and test/scripts (code with no processes of its own to wait on), and any
 *         `*.unit.test.ts`; not a soak file.
 * - int:  every other test under test/ (real ptys, processes, sockets, git and PostgreSQL).
 *
 * `workers` is each tier's maxWorkers on the 2-core machine the suite is measured on: see vitest.config.ts.
 */

const SOAK = ['test/**/*.soak.test.ts', 'test/**/*Chaos*.test.ts', 'test/**/*.model.test.ts', 'test/**/*.fuzz.test.ts'];
const UNIT = ['test/shared/**/*.test.ts', 'test/renderer/**/*.test.ts', 'test/scripts/**/*.test.ts', 'test/**/*.unit.test.ts'];

/** What vitest skips anywhere (its own default exclude): dependencies' own tests and git's folder. */
const NEVER = ['**/node_modules/**', '**/.git/**'];

export interface Tier {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** Files of this tier run at once (vitest's maxWorkers). */
  readonly workers: number;
}

export const TIERS = {
  // Two: one a core, as there is nothing to wait on.
  unit: { include: UNIT, exclude: [...NEVER, ...SOAK], workers: 2 },
  // Four on two cores: its files wait on real processes and time (CPU was under half the wall time).
  int: { include: ['test/**/*.test.ts'], exclude: [...NEVER, ...UNIT, ...SOAK], workers: 4 },
  // Two: each file runs a serve process and a Chromium, which do use the CPU they wait on. Three timed out a
  // merge-queue diff (30 s) in one full run on a quiet machine, where two had never.
  e2e: { include: ['e2e/**/*.test.ts'], exclude: NEVER, workers: 2 },
  // Two: chaos and crash loops time their kills against the machine, so nothing else runs beside them.
  soak: { include: SOAK, exclude: NEVER, workers: 2 },
} as const satisfies Record<string, Tier>;

export type TierName = keyof typeof TIERS;
