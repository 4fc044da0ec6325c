import type { AgentStateInfo, ReportableState } from '../../src-shared/agents/agentLife.js';
import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { ActivityPort } from '../agents/agent.js';
import type { AgentCallHooks } from '../agents/agentRpc.js';
import type { AgentStateView } from '../../src-shared/protocol/views.js';
import { PROFILE_SIGNALS, promptOnScreen, stateOfSignal, type ProfileSignals } from '../agents/stateSignals.js';
import { AgentStateTracker } from '../agents/stateTracker.js';
import { StatusLimiter } from '../agents/statusLimiter.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { Refusal } from '../base/procedureServer.js';
import type { BoardService } from '../board/boardService.js';
import type { PaneSession } from '../pty/paneSession.js';

export const StateTiming = {
  /** Output settles for this long before the screen is read again: a redraw is many writes, and reading
   *  ~50 lines per write would cost more than the output itself. Well inside the 250 ms a person notices. */
  screenSettleMs: 40,
} as const;

export interface AgentStatesDeps {
  board: BoardService;
  /** Monotonic ms; performance.now() by default. */
  now?: () => number;
}

interface Entry {
  readonly name: string;
  readonly tracker: AgentStateTracker;
  readonly signals: ProfileSignals;
  /** Its signals and screen come from the pane's one mirror: in this process, or in the pty host. */
  readonly session: PaneSession;
  /** Disposed when the agent is gone: its signals are no longer read. */
  readonly store: DisposableStore;
  screenTimer: TimerHandle | null;
  /** The prompt line on screen when the person pressed Enter: answered, so not raised again until gone
   *  (the dialog may still be drawn for a frame after the keystroke). */
  answered: string | null;
  /** The person's Enters so far: a screen read asked for before the latest one saw the prompt it answered. */
  enters: number;
  /** The screen reads, one after another, so each applies in the order it was asked. */
  reads: Promise<void>;
}

/**
 * Every pane's agent state, from its hooks (`forkbench status`), its terminal signals and its screen, as the
 * tracker merges them. Each change is journaled as an `agent-state` event with its source, and the windows
 * are told. The liveness check reads the state to hold the lease of an agent that waits on a person.
 */
export class AgentStates {
  private readonly entries = new Map<string, Entry>();
  private readonly limiter: StatusLimiter;
  private readonly now: () => number;
  private stopped = false;
  /** A state changed: the windows' agent list (and their notifications) follow. */
  readonly onChange = new Emitter<{ agentId: string; next: AgentStateInfo; before: AgentStateInfo }>();

  constructor(private readonly d: AgentStatesDeps) {
    this.now = d.now ?? (() => performance.now());
    this.limiter = new StatusLimiter(this.now);
  }

  /** A pane is launched, or taken back after a restart (`adopted`): its signals are read from now on. */
  track(agentId: string, name: string, profile: ProfileIdShared, session: PaneSession, o: { adopted?: boolean } = {}): void {
    const store = new DisposableStore();
    const tracker = new AgentStateTracker({
      adopted: o.adopted === true,
      now: this.now,
      wall: () => Date.now(),
      schedule: (fn, ms) => store.timeout(fn, ms),
      onChange: (next, before) => this.changed(agentId, next, before),
    });
    store.add(tracker);
    const e: Entry = { name, tracker, signals: PROFILE_SIGNALS[profile], session, store, screenTimer: null, answered: null, enters: 0, reads: Promise.resolve() };
    this.entries.set(agentId, e);
    store.add(
      session.onSignal((sig) => {
        const s = stateOfSignal(e.signals, sig);
        if (s) tracker.signal(s);
      }),
    );
    if (e.signals.prompts.length) store.add(session.onData(() => this.screenSoon(e)));
  }

  /** `forkbench status` from the agent's hook. Refused when the agent calls too often or has no pane. */
  report(agentId: string, state: ReportableState, text: string | null): AgentStateInfo {
    if (!this.limiter.take(agentId)) throw new Refusal('rate-limited', 'too many status calls; a hook may be looping. Calls are taken again within a second.');
    const e = this.entries.get(agentId);
    if (!e) throw new Refusal('bad-state', 'no pane of this Thread runs this agent');
    const wait = state === 'needs-input' ? e.signals.confirmHookWaitMs : undefined;
    const confirm = wait === undefined ? undefined : { afterMs: wait, stillShown: async () => promptOnScreen(e.signals, await e.session.screenLines()) !== null };
    e.tracker.signal({ state, source: 'hook', text }, confirm);
    return e.tracker.info;
  }

  /** What the person typed: Enter answers a prompt or starts a new turn. */
  input(agentId: string, data: string): void {
    const e = this.entries.get(agentId);
    if (!e || !data.includes('\r')) return;
    const enter = ++e.enters;
    // The screen as it is before the keystroke reaches the program (it is written after this): the prompt
    // on it is the one answered.
    if (e.signals.prompts.length) this.readLines(e, (lines) => enter === e.enters && (e.answered = promptOnScreen(e.signals, lines)));
    e.tracker.personAnswered();
  }

  /** The liveness check's verdict: progress or none. */
  progress(agentId: string, verdict: 'renew' | 'stalled' | 'idle'): void {
    this.entries.get(agentId)?.tracker.signal({ state: verdict === 'renew' ? 'working' : verdict, source: 'liveness' });
  }

  /** The agent's activity as its Agent reads it and the liveness check's word reaches it (Agent.readsActivity):
   *  by id, so a pane taken over by a resume is read from its new reader. */
  portOf(agentId: string): ActivityPort {
    const states = this;
    return {
      get info() {
        return states.info(agentId);
      },
      progress: (verdict) => states.progress(agentId, verdict),
    };
  }

  /** How long the agent has waited on a person (ms), or null when it is not waiting. */
  waitingFor(agentId: string): number | null {
    const t = this.entries.get(agentId)?.tracker;
    return t && t.info.state === 'needs-input' ? t.heldFor() : null;
  }

  /** The agent is gone: exited, for good; its signals are no longer read. */
  gone(agentId: string): void {
    const e = this.entries.get(agentId);
    if (!e) return;
    e.tracker.signal({ state: 'exited', source: 'liveness' });
    e.store.dispose();
    this.limiter.forget(agentId);
  }

  /** The pane was closed: forgotten altogether. */
  forget(agentId: string): void {
    this.gone(agentId);
    this.entries.delete(agentId);
  }

  info(agentId: string): AgentStateInfo | null {
    return this.entries.get(agentId)?.tracker.info ?? null;
  }

  views(): AgentStateView[] {
    return [...this.entries].map(([id, e]) => ({ id, name: e.name, ...e.tracker.info }));
  }

  /** What the agents' socket asks of the states: an agent's own report (`forkbench status`), and every
   *  agent's state for the board's answer. */
  agentHooks(): Pick<AgentCallHooks, 'reportState' | 'agentStates'> {
    return { reportState: (agentId, state, text) => this.report(agentId, state, text), agentStates: () => this.views() };
  }

  /** The Thread shuts: no more signals, timers, journal lines or change notices. */
  stop(): void {
    this.stopped = true;
    this.onChange.dispose();
    for (const e of this.entries.values()) e.store.dispose();
  }

  private screenSoon(e: Entry): void {
    if (e.screenTimer?.pending) return;
    e.screenTimer = e.store.timeout(() => {
      // A read asked for before an Enter that lands after it is of the screen the person answered: the
      // Enter's own read says which prompt that was, and this one must not raise it again.
      const enters = e.enters;
      this.readLines(e, (lines) => enters === e.enters && this.readScreen(e, lines));
    }, StateTiming.screenSettleMs);
  }

  /** The pane's screen lines, once parsed, to `apply`, after every read asked for before (a pane in the pty
   *  host answers over its link); nothing for a pane gone meanwhile. */
  private readLines(e: Entry, apply: (lines: string[]) => unknown): void {
    e.reads = e.reads
      .then(() => e.session.screenLines())
      .then((lines) => {
        if (!this.stopped && !e.store.isDisposed) apply(lines);
      })
      .catch(() => undefined);
  }

  private readScreen(e: Entry, lines: string[]): void {
    const line = promptOnScreen(e.signals, lines);
    const cur = e.tracker.info;
    if (line === null) e.answered = null;
    else if (line === e.answered) return;
    if (line !== null) {
      if (cur.state !== 'needs-input') e.tracker.signal({ state: 'needs-input', source: 'screen', text: line });
    } else if (cur.state === 'needs-input' && cur.source === 'screen') {
      // The prompt the screen saw is gone: answered (or dismissed), so the agent is back at work.
      e.tracker.signal({ state: 'working', source: 'screen' });
    }
  }

  private changed(agentId: string, next: AgentStateInfo, before: AgentStateInfo): void {
    if (this.stopped) return;
    // The journal line is the record of who waited and why; a board that cannot write loses only the line.
    void this.d.board.apply((eng) => eng.agentState(agentId, next.state, next.source, next.text)).catch(() => undefined);
    this.onChange.fire({ agentId, next, before });
  }
}
