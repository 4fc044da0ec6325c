import { readFileSync } from 'node:fs';

/**
 * Notices that the machine slept. The board's monotonic clock stops during suspend (fair to agents on the
 * same machine, which were frozen too), but on wake every agent needs a moment before it shows progress
 * again, so the host grants grace instead of letting the first liveness round find them "silent". Linux only
 * here: /proc/uptime counts suspended time and performance.now() does not, so their drift is the sleep,
 * and a change of the wall clock (NTP, a person) cannot trigger it. Electron uses powerMonitor's 'resume'.
 */
export const SuspendConstants = {
  /** Checked this often; a sleep shorter than the check period plus the threshold goes unnoticed, harmlessly. */
  checkEveryMs: 5000,
  /** Drift above this is a sleep, not scheduling jitter. */
  thresholdMs: 3000,
} as const;

export function readUptimeMs(text = readFileSync('/proc/uptime', 'utf8')): number {
  return Number(text.split(' ')[0]) * 1000;
}

export class SuspendWatch {
  private timer: NodeJS.Timeout | null = null;
  private lastUptime: number;
  private lastMono: number;

  constructor(
    private readonly onResume: (sleptMs: number) => void,
    private readonly uptime: () => number = () => readUptimeMs(),
    private readonly mono: () => number = () => performance.now(),
  ) {
    this.lastUptime = uptime();
    this.lastMono = mono();
  }

  static start(onResume: (sleptMs: number) => void): SuspendWatch | null {
    if (process.platform !== 'linux') return null;
    const w = new SuspendWatch(onResume);
    w.timer = setInterval(() => w.check(), SuspendConstants.checkEveryMs);
    w.timer.unref();
    return w;
  }

  check(): void {
    let up: number;
    try {
      up = this.uptime();
    } catch {
      // Out of descriptors (EMFILE), say: this round is skipped. A timer must never turn a failed read into
      // an uncaught exception, which stops the host.
      return;
    }
    const mono = this.mono();
    const slept = up - this.lastUptime - (mono - this.lastMono);
    this.lastUptime = up;
    this.lastMono = mono;
    if (slept > SuspendConstants.thresholdMs) this.onResume(slept);
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
