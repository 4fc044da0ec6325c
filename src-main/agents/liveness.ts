import type { BoardEvent } from '../../src-shared/board/events.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { leaseFor, shortestLease } from '../../src-shared/board/leaseEvidence.js';
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
  /** performance.now() of the last sign of progress: pty output, a board call, or CPU time used. */
  lastProgressAt: number;
  now: number;
  /** The Thread's lease: silence for this long means the agent is not working on anything. */
  leaseMs: number;
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
}

/** What the loop reads of, and tells to, the agents' states (src-main/roster/agentStates.ts). */
export interface LivenessStates {
  /** How long the agent has waited on a person (ms, on the loop's clock), or null when it is not waiting. */
  waitingFor(agentId: string): number | null;
  /** The verdict on an agent that is not waiting: making progress, stalled (silent while it holds a claim,
   *  or stopped), or idle (alive, silent, holding nothing: a shell at its prompt, a CLI between turns). */
  progress(agentId: string, verdict: 'renew' | 'stalled' | 'idle'): void;
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
 * gathered — its pane's output, its board calls, its process tree's CPU time — and judged; `renew` renews
 * every claim it holds, `stalled` leaves them to run out. A stopped process or a zombie is never renewed.
 */
export class LivenessLoop {
  private readonly store = new DisposableStore();
  private timer: TimerHandle | null = null;
  private stopped = false;
  /** Each agent's CPU time as last read, and when it last grew. */
  private readonly cpu = new Map<string, { lastCpuMs: number; lastChangeAt: number }>();

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
      const cpu = this.cpu.get(a.id) ?? { lastCpuMs: 0, lastChangeAt: s.startedAt };
      this.cpu.set(a.id, cpu);
      if (facts.cpuMs > cpu.lastCpuMs) {
        cpu.lastCpuMs = facts.cpuMs;
        cpu.lastChangeAt = now;
      }
      const lastProgressAt = Math.max(s.lastOutputAt, a.lastBoardCallAt, cpu.lastChangeAt);
      const { waitHoldMs } = this.d.board.state.settings;
      // Silence is judged against the agent's own lease: its profile's, when the Thread sets one.
      const leaseMs = leaseFor(this.d.board.state.settings, a.id);
      const verdict = judgeWithWait({ state: facts.state, lastProgressAt, now, leaseMs, waitingMs: this.d.states?.waitingFor(a.id) ?? null, waitHoldMs });
      const before = a.status;
      const holds = this.d.board.engine.claimsOf(a.id).length > 0;
      const stopped = facts.state === 'stopped' || facts.state === 'zombie';
      // Silence is a stall only for an agent with work to do; one holding nothing is idle. A stopped process
      // or a zombie is stalled whatever it holds. Waiting on a person is no stall: the state says so.
      const stalled = verdict === 'stalled' && (holds || stopped);
      if (verdict !== 'gone') a.progressing(!stalled);
      if (verdict === 'renew') {
        if (holds) await this.d.board.apply((e) => e.renewLive(a.id, 'liveness', now - lastProgressAt));
      } else if (verdict === 'hold') {
        if (holds) await this.d.board.apply((e) => e.renewLive(a.id, 'waiting'));
      } else if (verdict === 'waited-too-long') {
        if (holds) await this.d.board.apply((e) => e.endWaited(a.id));
      }
      if (verdict === 'renew') this.d.states?.progress(a.id, 'renew');
      else if (verdict === 'stalled') this.d.states?.progress(a.id, stalled ? 'stalled' : 'idle');
      if (a.status !== before) this.d.onStatus();
    }
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
