import type { AgentStateInfo, ReportableState } from '../../src-shared/agents/agentState.js';
import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentCallHooks } from '../agents/agentRpc.js';
import type { AgentStateView } from '../../src-shared/protocol/views.js';
import { PROFILE_SIGNALS, promptOnScreen, stateOfSignal, type ProfileSignals } from '../agents/stateSignals.js';
import { AgentStateTracker } from '../agents/stateTracker.js';
import { StatusLimiter } from '../agents/statusLimiter.js';
import type { ProfileIdShared } from '../../src-shared/protocol/windowApi.js';
import { Refusal } from '../base/procedureServer.js';
import type { BoardService } from '../board/boardService.js';
import { HeadlessMirror } from '../pty/headlessMirror.js';
import type { PaneSession } from '../pty/paneSession.js';
import { PtySession } from '../pty/ptySession.js';

/**
 * Scrollback of the board host's own mirror of a pane kept in the pty host: signals and the visible screen
 * are all it is read for, so no history is kept.
 */
const SIGNAL_MIRROR_SCROLLBACK = 0;

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
  /** The screen the pane's signals and prompts are read from. */
  readonly mirror: HeadlessMirror;
  /** The mirror is this host's own copy (the pane lives in the pty host), resized here. */
  readonly ownMirror: boolean;
  readonly store: DisposableStore;
  screenTimer: TimerHandle | null;
  /** The prompt line on screen when the person pressed Enter: answered, so not raised again until gone
   *  (the dialog may still be drawn for a frame after the keystroke). */
  answered: string | null;
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

  /** A pane is launched: its signals are read from now on. */
  track(agentId: string, name: string, profile: ProfileIdShared, session: PaneSession, size: { cols: number; rows: number }): void {
    const store = new DisposableStore();
    // A pane in this process has its mirror; one kept in the pty host is mirrored here from its output, so
    // terminal signals and screen prompts are read the same way wherever the pty lives.
    let mirror: HeadlessMirror;
    if (session instanceof PtySession) mirror = session.mirror;
    else {
      const own = store.add(new HeadlessMirror(size.cols, size.rows, SIGNAL_MIRROR_SCROLLBACK));
      store.add(session.onData((d) => own.write(d)));
      mirror = own;
    }
    const tracker = new AgentStateTracker({
      now: this.now,
      wall: () => Date.now(),
      schedule: (fn, ms) => store.timeout(fn, ms),
      onChange: (next, before) => this.changed(agentId, next, before),
    });
    store.add(tracker);
    const e: Entry = { name, tracker, signals: PROFILE_SIGNALS[profile], mirror, ownMirror: !(session instanceof PtySession), store, screenTimer: null, answered: null };
    this.entries.set(agentId, e);
    store.add(
      mirror.onSignal.event((sig) => {
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
    const confirm = wait === undefined ? undefined : { afterMs: wait, stillShown: () => promptOnScreen(e.signals, e.mirror.visibleLines()) !== null };
    e.tracker.signal({ state, source: 'hook', text }, confirm);
    return e.tracker.info;
  }

  /** The pane was resized: a mirror of the board host's own follows (the pane's own mirror is resized with it). */
  resize(agentId: string, cols: number, rows: number): void {
    const e = this.entries.get(agentId);
    if (e?.ownMirror) e.mirror.resize(cols, rows);
  }

  /** What the person typed: Enter answers a prompt or starts a new turn. */
  input(agentId: string, data: string): void {
    const e = this.entries.get(agentId);
    if (!e || !data.includes('\r')) return;
    if (e.signals.prompts.length) e.answered = promptOnScreen(e.signals, e.mirror.visibleLines());
    e.tracker.personAnswered();
  }

  /** The liveness check's verdict: progress or none. */
  progress(agentId: string, verdict: 'renew' | 'stalled'): void {
    this.entries.get(agentId)?.tracker.signal({ state: verdict === 'renew' ? 'working' : 'stalled', source: 'liveness' });
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
    e.screenTimer = e.store.timeout(() => void e.mirror.drained().then(() => this.readScreen(e)), StateTiming.screenSettleMs);
  }

  private readScreen(e: Entry): void {
    if (this.stopped) return;
    const line = promptOnScreen(e.signals, e.mirror.visibleLines());
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
