import type { BoardEvent } from '../../src-shared/board/events.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { leaseFor, shortestLease } from '../../src-shared/board/leaseEvidence.js';
import { leaseRuns } from '../../src-shared/board/lease.js';
import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import type { BoardService } from '../board/boardService.js';
import { readTreeCpu, type ProcState, type TreeCpu } from '../pty/procReader.js';
import type { Agent } from './agent.js';

/**
 * The background check that renews the leases of agents that are alive and making progress. Its decision is
 * a pure function, so every case (stopped, zombie, silent, busy) is a unit test; the loop around it only
 * gathers facts.
 */
export interface LivenessFacts {
  /** State of the agent's root process. */
  state: ProcState;
  /** performance.now() of the last sign of progress (progressAt: work, and output within its bounds). */
  lastProgressAt: number;
  now: number;
  /** The Thread's lease: silence for this long means the agent is not working on anything. */
  leaseMs: number;
}

export const LivenessLimits = {
  /**
   * The share of one core an agent's process tree must use, over the window since its CPU last counted (at
   * most about a lease), for its CPU time to count as work. A shell loop that prints a dot and sleeps forks a
   * `sleep` each turn and so is never quite at 0: measured here 0.5-0.9 % of a core with 0.2 s turns, less
   * with longer ones; an agent CLI streaming a model's answer, or a build or test it runs, uses far more.
   */
  workCpuShare: 0.02,
  /** The least CPU that counts at all: /proc counts in 10 ms ticks, so over a short window a few ms of a
   *  sleeping loop can read as one tick; five are no accident. */
  minWorkCpuMs: 50,
} as const;

/**
 * When the agent last made progress, from its work (a grant, a board call, which a commit through the fence
 * is, or CPU time that counts: CpuWork below) and its pane's output. For an agent that holds claims, output alone is
 * progress for at most one lease past its last work (issue 42: a pane printing a dot every 15 s kept 23 claims
 * for ever); an agent really working streams output and also calls the board or uses the CPU. For an agent that
 * holds nothing, output is progress as it is (it decides only whether it is shown idle or running).
 */
export function progressAt(f: { lastWorkAt: number; lastOutputAt: number; leaseMs: number; holds: boolean }): number {
  const output = f.holds ? Math.min(f.lastOutputAt, f.lastWorkAt + f.leaseMs) : f.lastOutputAt;
  return Math.max(f.lastWorkAt, output);
}

/**
 * One agent's CPU readings over about the last lease, and when they last counted as work: a reading counts when
 * the tree used at least LivenessLimits' share of the time since the window's start (and its floor). The window
 * starts again at each reading that counts, so a burst counts once, when it is seen.
 */
export class CpuWork {
  private samples: Array<{ at: number; cpuMs: number }>;
  lastWorkAt: number;

  constructor(startedAt: number) {
    this.samples = [{ at: startedAt, cpuMs: 0 }];
    this.lastWorkAt = startedAt;
  }

  observe(now: number, cpuMs: number, leaseMs: number): void {
    const last = this.samples[this.samples.length - 1] as { cpuMs: number };
    // A drop (a descendant reaped outside the tree): what it had used is out of the sum, so start again from here.
    if (cpuMs < last.cpuMs) {
      this.samples = [{ at: now, cpuMs }];
      return;
    }
    this.samples.push({ at: now, cpuMs });
    while (this.samples.length > 2 && (this.samples[1] as { at: number }).at <= now - leaseMs) this.samples.shift();
    const base = this.samples[0] as { at: number; cpuMs: number };
    const used = cpuMs - base.cpuMs;
    if (used > 0 && used >= Math.max(LivenessLimits.minWorkCpuMs, LivenessLimits.workCpuShare * (now - base.at))) {
      this.lastWorkAt = now;
      this.samples = [{ at: now, cpuMs }];
    }
  }
}

export type LivenessVerdict = 'renew' | 'stalled' | 'gone';

export function judgeLiveness(f: LivenessFacts): LivenessVerdict {
  if (f.state === 'gone') return 'gone';
  // A stopped process (SIGSTOP, a debugger, Ctrl-Z) or a zombie cannot be working, whatever its past.
  if (f.state === 'stopped' || f.state === 'zombie') return 'stalled';
  return f.now - f.lastProgressAt >= f.leaseMs ? 'stalled' : 'renew';
}

/** What the loop reads of one agent's pane. */
export interface LivenessSubject {
  readonly agent: Agent;
  /** performance.now() of the pane's last output. */
  readonly lastOutputAt: number;
  /** performance.now() of its launch: its CPU time counts as progress from then. */
  readonly startedAt: number;
}

export interface LivenessLoopDeps {
  board: BoardService;
  /** The agents to check, each round. */
  subjects: () => Iterable<LivenessSubject>;
  /** An agent's status changed (running ↔ stalled). */
  onStatus: () => void;
  warn?: (message: string) => void;
  readCpu?: (pid: number) => Promise<TreeCpu>;
  now?: () => number;
  /** The agents' states: an agent waiting on a person is held, not judged on its progress. */
  states?: LivenessStates;
  /** Whether the host is making something the agent waits on (a claim's folder, for a person's assignment as
   *  for its own claim): that wait is the host's, not the agent's silence (two-host chaos: an assigned claim
   *  waiting 5 s for a dead host's push under a 2 s lease lapsed before its agent could start). */
  hostWorksFor?: (agentId: string) => boolean;
}

/** What the loop reads of the agents' states (src-main/roster/agentStates.ts); its verdicts go to each agent
 *  (Agent.judged), which owns its activity and its life alike. */
export interface LivenessStates {
  /** How long the agent has waited on a person (ms, on the loop's clock), or null when it is not waiting. */
  waitingFor(agentId: string): number | null;
}

/** What the loop does with an agent: renew as live, hold for a person, end a wait that ran too long, or
 *  leave its claims to run out. Pure, so the rule is a unit test. */
export type HoldVerdict = LivenessVerdict | 'hold' | 'waited-too-long';

/**
 * An agent waiting on a person makes no progress, and should not: the person holds it up. While it waits
 * its claims are renewed, up to the Thread's wait hold; then they lapse with reason `waited-too-long`. A
 * stopped or zombie process is not waiting on anyone, whatever its screen last showed.
 */
export function judgeWithWait(f: LivenessFacts & { waitingMs: number | null; waitHoldMs: number }): HoldVerdict {
  const base = judgeLiveness(f);
  if (base === 'gone' || f.waitingMs === null || f.state === 'stopped' || f.state === 'zombie') return base;
  return f.waitingMs >= f.waitHoldMs ? 'waited-too-long' : 'hold';
}

/**
 * The loop around the verdict: every renew interval (the Thread's setting), each live agent's facts are
 * gathered — its pane's output, its board calls, its process tree's CPU time (progressAt weighs them) — and judged; `renew` renews
 * every claim it holds, `stalled` leaves them to run out. A stopped process or a zombie is never renewed.
 */
export class LivenessLoop {
  private readonly store = new DisposableStore();
  private timer: TimerHandle | null = null;
  private stopped = false;
  /** Each agent's CPU readings, and when they last counted as work. */
  private readonly cpu = new Map<string, CpuWork>();

  constructor(private readonly d: LivenessLoopDeps) {}

  /** Arm (or re-arm, after a settings change: a new interval takes effect now, not after the old one). */
  schedule(): void {
    this.timer?.dispose();
    this.timer = null;
    // A round that was in flight when stop() began ends here: it must not arm another.
    if (this.stopped) return;
    // The rhythm fits the shortest lease any claim has, a profile's included (leaseEvidence.ts).
    this.timer = this.store.timeout(() => {
      this.timer = null;
      // A round that overlaps a shutdown finds the board closed: that is the end of checking, not an error.
      void this.check()
        .catch((err: Error) => {
          if (!this.stopped) this.d.warn?.(`forkbench: liveness check failed: ${err.message}`);
        })
        .finally(() => this.schedule());
    }, effectiveRenewIntervalMs({ ...this.d.board.state.settings, leaseMs: shortestLease(this.d.board.state.settings) }));
  }

  /** The board's event: a new lease or interval takes effect now, not after the old interval runs out. */
  follow(e: BoardEvent): void {
    if (e.kind === 'settings-set') this.schedule();
  }

  /** One round. */
  async check(): Promise<void> {
    const readCpu = this.d.readCpu ?? readTreeCpu;
    const subjects = [...this.d.subjects()];
    for (const id of this.cpu.keys()) if (!subjects.some((s) => s.agent.id === id)) this.cpu.delete(id);
    for (const s of subjects) {
      const a = s.agent;
      if (this.stopped) return;
      if (!a.alive || a.pid === null) continue;
      let facts: TreeCpu;
      try {
        facts = await readCpu(a.pid);
      } catch {
        continue;
      }
      // The Thread may have been shut while /proc was read: its claims are released, nothing is renewed.
      if (this.stopped) return;
      // Gone while /proc was read: its death is the roster's to deal with.
      if (!a.alive) continue;
      const now = this.now();
      // Silence is judged against the agent's own lease: its profile's, when the Thread sets one.
      const leaseMs = leaseFor(this.d.board.state.settings, a.id);
      let cpu = this.cpu.get(a.id);
      if (!cpu) this.cpu.set(a.id, (cpu = new CpuWork(s.startedAt)));
      cpu.observe(now, facts.cpuMs, leaseMs);
      // Only work it holds that counts down asks it for progress: work in review waits on the person (issue 44),
      // so an agent at its prompt with nothing else is idle, not stalled.
      const holds = this.worksOn(a.id);
      const lastWorkAt = this.d.hostWorksFor?.(a.id) ? now : Math.max(a.boardWorkAt(now), cpu.lastWorkAt, this.lastGrantAt(a.id, now));
      const lastProgressAt = progressAt({ lastWorkAt, lastOutputAt: s.lastOutputAt, leaseMs, holds });
      const { waitHoldMs } = this.d.board.state.settings;
      const verdict = judgeWithWait({ state: facts.state, lastProgressAt, now, leaseMs, waitingMs: this.d.states?.waitingFor(a.id) ?? null, waitHoldMs });
      const before = a.status;
      const stopped = facts.state === 'stopped' || facts.state === 'zombie';
      // Silence is a stall only for an agent with work to do; one holding nothing is idle. A stopped process
      // or a zombie is stalled whatever it holds. Waiting on a person is no stall: the state says so.
      const stalled = verdict === 'stalled' && (holds || stopped);
      if (verdict === 'renew') {
        if (holds) await this.d.board.apply((e) => e.renewLive(a.id, 'liveness', now - lastProgressAt));
      } else if (verdict === 'hold') {
        if (holds) await this.d.board.apply((e) => e.renewLive(a.id, 'waiting'));
      } else if (verdict === 'waited-too-long') {
        if (holds) await this.d.board.apply((e) => e.endWaited(a.id));
      }
      // One word to the agent, which moves its life and its activity together (agent.ts `judged`).
      if (verdict !== 'gone') a.judged(verdict === 'renew' ? 'renew' : verdict === 'stalled' ? (stalled ? 'stalled' : 'idle') : 'held');
      if (a.status !== before) this.d.onStatus();
    }
  }

  /** Whether the agent holds a claim whose lease runs (lease.ts leaseRuns): one it is to make progress on. */
  private worksOn(agentId: string): boolean {
    const { engine } = this.d.board;
    return engine.claimsOf(agentId).some((id) => {
      const t = engine.task(id);
      return !!t && leaseRuns(t);
    });
  }

  /**
   * When the newest of the agent's claims was granted, on this loop's clock (the board's is its own): a grant
   * counts as work, so a task a person assigned is worked on by output for its first lease, as one claimed is.
   */
  private lastGrantAt(agentId: string, now: number): number {
    const { engine } = this.d.board;
    const boardNow = engine.now();
    let at = -Infinity;
    for (const id of engine.claimsOf(agentId)) {
      const c = engine.task(id)?.claim;
      if (c) at = Math.max(at, now - (boardNow - c.grantedAt));
    }
    return at;
  }

  /** No round starts or renews after this; one in flight ends at its next step. */
  stop(): void {
    this.stopped = true;
    this.timer = null;
    this.store.dispose();
  }

  private now(): number {
    return (this.d.now ?? performance.now.bind(performance))();
  }
}
