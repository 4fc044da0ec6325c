/**
 * A pane killed and reaped leaves its pid free, and on a machine with pid_max 32768 a busy run hands it to
 * someone else within a minute. A scan after that (dispose after kill) must not follow the stranger: that is
 * how a CI run once SIGKILLed its own process group.
 *
 * The scenario runs in a pid namespace of its own (unshare, as root), where it can make the kernel give the
 * dead root's pid to a stranger without handing other tests' stale pids to new processes.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findOnPath } from '../../../src-main/base/pathLookup.js';

const scenario = new URL('../../fixtures/pty/pidReuseScenario.ts', import.meta.url).pathname;

function canUnsharePids(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0 || !findOnPath('unshare')) return false;
  return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
}

describe.runIf(canUnsharePids())('process-group kills and pid reuse', () => {
  it('a killer whose root died and was reaped leaves the new owner of that pid alone, and still kills a live root', () => {
    const run = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '--import', 'tsx', scenario], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(result).toEqual({ samePid: true, strangerSurvived: true, controlSignal: 'SIGHUP' });
  });
});
