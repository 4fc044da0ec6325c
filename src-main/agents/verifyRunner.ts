import { spawn } from 'node:child_process';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { containedShell } from '../base/verifyReaper.js';
import { withoutInheritedFds } from '../pty/inheritedFds.js';

export const VerifyConstants = {
  /** A test suite can take a while; past 10 minutes it is more likely hung than slow. */
  defaultTimeoutMs: 10 * 60_000,
  /** The end of the output is where test runners put the failures; 4 KiB fits in one note. */
  tailChars: 4096,
  /** After SIGTERM, how long a verify command (and what it left running) gets to clean up before SIGKILL. */
  killGraceMs: 2000,
  /** After the verify's own process exited (its tree ended by then), how long its output pipe may stay open
   *  before the result is taken without the rest: what the tree wrote is in the pipe already and is read in
   *  milliseconds, so only a holder outside the tree (a descriptor passed over a socket) keeps it open, and
   *  that must not keep the merge queue waiting (issue 42, item 4). */
  outputDrainMs: 1000,
  /** How long past its grace a reaper that was told to stop may take before its group is killed outright:
   *  it signals, waits the grace, then kills in rounds of 10 ms; a second more means it is stuck. */
  reaperSlackMs: 1000,
} as const;

export interface VerifyOutcome {
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Stopped before it ended, by whoever runs it (the entry it checked left the queue, the task left review). */
  stopped?: boolean;
  durationMs: number;
  /** The last few KiB of stdout and stderr together. */
  tail: string;
}

export interface VerifyHooks {
  /** The pid of the verify's root, which leads its own session: the host tracks it as the agent's pane. */
  started?: (pid: number) => void;
  /** Aborting stops the verify and everything it started. */
  signal?: AbortSignal;
  /** The verify's shell argv, put in its agent's sandbox (AgentSandbox.wrapVerify): below the reaper, which
   *  must stay the host's child to watch the tree from outside. */
  contain?: (argv: readonly string[]) => readonly string[];
}

/**
 * Runs a task's verify command (e.g. `npm test`) in the Thread's folder, contained like a pane
 * (base/verifyReaper.ts): every process it starts, a `setsid -f` one too, stays below its root and ends
 * with it, at its exit, its timeout or a stop. The result is taken when the verify exits, its output read for
 * at most `outputDrainMs` more. An agent's "done" is a claim; this is how the host checks it.
 */
export function runVerify(
  command: string,
  cwd: string,
  timeoutMs: number = VerifyConstants.defaultTimeoutMs,
  env: NodeJS.ProcessEnv = process.env,
  on: VerifyHooks = {},
): Promise<VerifyOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let tail = '';
    const keep = (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-VerifyConstants.tailChars);
    };
    // The verify command is the repository's code: it must not inherit the panes' pty masters (issue 16).
    const [program = '/bin/sh', ...programArgs] = on.contain?.(['/bin/sh', '-c', command]) ?? ['/bin/sh', '-c', command];
    const reaper = containedShell([program, ...programArgs], VerifyConstants.killGraceMs, env);
    const contained = reaper !== null;
    const launch = reaper ?? withoutInheritedFds(program, programArgs, env);
    // detached: its own session and group, led by this pid, which the host tracks as the agent's pane.
    const child = spawn(launch.command, launch.args, { cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    let stopped = false;
    let exited = false;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void) => timers.add(setTimeout(fn, ms));
    const signal = (pid: number, sig: NodeJS.Signals) => {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    };
    const group = (sig: NodeJS.Signals) => child.pid && signal(-child.pid, sig);
    /** Contained, the reaper ends the tree when told to stop; else the group is all there is to end. */
    const stop = () => {
      if (exited || !child.pid) return;
      if (contained) signal(child.pid, 'SIGTERM');
      else group('SIGTERM');
      const slack = contained ? VerifyConstants.reaperSlackMs : 0;
      later(VerifyConstants.killGraceMs + slack, () => group('SIGKILL'));
    };
    let settled = false;
    const settle = (o: Omit<VerifyOutcome, 'durationMs' | 'tail' | 'timedOut' | 'stopped'>) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      on.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ ...o, passed: o.passed && !timedOut && !stopped, timedOut, ...(stopped ? { stopped } : {}), durationMs: performance.now() - started, tail });
    };
    const onAbort = () => {
      stopped = true;
      stop();
    };
    child.on('error', (err) => {
      tail = `could not run: ${err.message}`;
      settle({ passed: false, exitCode: null, signal: null });
    });
    if (child.pid === undefined) return;
    on.started?.(child.pid);
    later(timeoutMs, () => {
      timedOut = true;
      stop();
    });
    if (on.signal?.aborted) onAbort();
    else on.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('exit', (code, sig) => {
      exited = true;
      // Uncontained, whatever the command left in its group is ended with it; contained, the reaper ended the
      // tree, unless something killed the reaper itself: then its group is what can still be reached.
      if (!contained) group('SIGTERM');
      else if (sig) group('SIGKILL');
      const done = () => settle({ passed: code === 0, exitCode: code, signal: sig });
      let open = 2;
      const closed = () => --open === 0 && done();
      if (child.stdout.closed) closed();
      else child.stdout.once('close', closed);
      if (child.stderr.closed) closed();
      else child.stderr.once('close', closed);
      later(VerifyConstants.outputDrainMs, done);
    });
  });
}

/** The note a failed verification leaves for the agent. */
export function failureNote(command: string, o: VerifyOutcome): string {
  const how = o.timedOut ? 'timed out' : o.stopped ? 'was stopped' : o.signal ? `was killed by ${o.signal}` : `exited with ${o.exitCode}`;
  // The tail is terminal output (colours, progress bars): as it is, the board would refuse it as a note.
  return `Verify \`${command}\` ${how} after ${(o.durationMs / 1000).toFixed(1)} s. Output (tail):\n${outputAsText(o.tail)}`;
}
