export interface VitestJsonReport {
  testResults?: Array<{
    name: string;
    status: string;
    message?: string;
    assertionResults: Array<{ status: string; duration?: number }>;
  }>;
}
export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  /** One per file that failed outside its tests (did not load, a hook threw), and one if vitest failed anyway. */
  notes: Array<{ file: string; why: string }>;
}
export function tally(report: VitestJsonReport, exitCode?: number | null): Tally;
