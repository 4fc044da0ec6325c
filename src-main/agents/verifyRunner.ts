import { spawn } from 'node:child_process';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { withoutInheritedFds } from '../pty/inheritedFds.js';

export const VerifyConstants = {
  /** A test suite can take a while; past 10 minutes it is more likely hung than slow. */
  defaultTimeoutMs: 10 * 60_000,
  /** The end of the output is where test runners put the failures; 4 KiB fits in one note. */
  tailChars: 4096,
  /** After SIGTERM, how long a verify command gets to clean up before SIGKILL. */
  killGraceMs: 2000,
} as const;

export interface VerifyOutcome {
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** The last few KiB of stdout and stderr together. */
  tail: string;
}

/**
 * Runs a task's verify command (e.g. `npm test`) in the Thread's folder, as its own process group so a
 * timeout can kill everything it started. An agent's "done" is a claim; this is how the host checks it.
 */
export function runVerify(
  command: string,
  cwd: string,
  timeoutMs: number = VerifyConstants.defaultTimeoutMs,
  env: NodeJS.ProcessEnv = process.env,
  on: { started?: (pid: number) => void } = {},
): Promise<VerifyOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let tail = '';
    const keep = (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-VerifyConstants.tailChars);
    };
    // The verify command is the repository's code: it must not inherit the panes' pty masters (issue 16).
    const launch = withoutInheritedFds('/bin/sh', ['-c', command], env);
    // detached: its own session and group, led by this pid, which the host tracks as the agent's pane.
    const child = spawn(launch.command, launch.args, { cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) on.started?.(child.pid);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    let killTimer: NodeJS.Timeout | null = null;
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      group('SIGTERM');
      killTimer = setTimeout(() => group('SIGKILL'), VerifyConstants.killGraceMs);
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ passed: false, exitCode: null, signal: null, timedOut: false, durationMs: performance.now() - started, tail: `could not run: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      resolve({ passed: code === 0 && !timedOut, exitCode: code, signal, timedOut, durationMs: performance.now() - started, tail });
    });
  });
}

/** The note a failed verification leaves for the agent. */
export function failureNote(command: string, o: VerifyOutcome): string {
  const how = o.timedOut ? 'timed out' : o.signal ? `was killed by ${o.signal}` : `exited with ${o.exitCode}`;
  // The tail is terminal output (colours, progress bars): as it is, the board would refuse it as a note.
  return `Verify \`${command}\` ${how} after ${(o.durationMs / 1000).toFixed(1)} s. Output (tail):\n${outputAsText(o.tail)}`;
}
