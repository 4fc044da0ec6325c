import { MAX_STATE_TEXT_CHARS, sourceRank, type AgentState, type AgentStateInfo, type StateSource } from '../../src-shared/agents/agentLife.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { showControls } from '../../src-shared/text/controlChars.js';

/** One thing a signal says about an agent. */
export interface StateSignal {
  readonly state: AgentState;
  readonly source: StateSource;
  /** The prompt's text, as the signal carried it (raw: controls are made visible here). */
  readonly text?: string | null;
  /** An idle that says where the agent is, not that its work is done (a shell back at its prompt): silent
   *  while it holds a claim, the liveness check may still call it stalled. */
  readonly atPrompt?: boolean;
}

/** A signal that counts only if what it reports is still so a moment later (Codex's PermissionRequest also
 *  fires for approvals its auto-review grants at once: the prompt counts once it is still on screen). */
export interface Confirm {
  readonly afterMs: number;
  /** Asked once `afterMs` has passed: is the prompt still there? (A pane in the pty host answers later.) */
  readonly stillShown: () => boolean | Promise<boolean>;
}

export interface TrackerDeps {
  /** Monotonic ms (performance.now() in the host; a fake in tests): how long a state has lasted. */
  now: () => number;
  /** Wall clock ms, for display only. */
  wall: () => number;
  /** Run `fn` after `ms` (the host's timers; a fake in tests). */
  schedule: (fn: () => void, ms: number) => Disposable;
  /** Every change, once. */
  onChange: (next: AgentStateInfo, before: AgentStateInfo) => void;
  /** A pane this host took back after a restart: nothing is known of it until it is seen (`unknown`), where
   *  a pane just launched is presumed to be starting its work (`working`). */
  adopted?: boolean;
}

/** A prompt's text as kept: controls shown as escapes (never acted on where it is shown), clipped. */
export function cleanStateText(text: string | null | undefined): string | null {
  if (!text) return null;
  const one = showControls(text.trim(), 'tab-newline');
  if (!one) return null;
  return one.length > MAX_STATE_TEXT_CHARS ? `${one.slice(0, MAX_STATE_TEXT_CHARS - 1)}…` : one;
}

/**
 * One pane's state, merged from every signal its agent gives. The rules, in order:
 * - exited is final; nothing after it counts;
 * - an adopted pane is unknown until it is seen: a signal of its own, the person's Enter, or the liveness
 *   check's finding of a lease's silence (its "working" there is only the adoption's date);
 * - the liveness check speaks only about progress: it turns `working` into `stalled` (silent, holding a
 *   claim) or `idle` (silent, holding nothing) and back, and never overrides a wait or a finished turn (an
 *   agent waiting on a person makes no progress, rightly); a shell idle at its prompt while it holds a claim
 *   is no finished turn, and may be called stalled;
 * - otherwise a signal from a source at least as strong as the current state's replaces it;
 * - a weaker source may still turn `working` into `needs-input` (a prompt on screen is evidence even where
 *   the hook said nothing, as for Claude's question dialogs), but never clears a stronger source's wait or
 *   turn;
 * - the person pressing Enter in a waiting or idle pane answers it: `working`;
 * - a wait said again without its prompt's text keeps the text it had.
 */
export class AgentStateTracker implements Disposable {
  private cur: AgentStateInfo;
  private enteredAt: number;
  private pending: Disposable | null = null;
  private disposed = false;
  /** The current idle is a shell's prompt (StateSignal.atPrompt). */
  private idleAtPrompt = false;

  constructor(private readonly d: TrackerDeps) {
    this.cur = d.adopted
      ? { state: 'unknown', source: 'liveness', text: null, since: d.wall() }
      : { state: 'working', source: 'liveness', text: null, since: d.wall(), presumed: true };
    this.enteredAt = d.now();
  }

  get info(): AgentStateInfo {
    return this.cur;
  }

  /** How long the current state has lasted (monotonic ms). */
  heldFor(): number {
    return this.d.now() - this.enteredAt;
  }

  /** Apply a signal; with `confirm`, only once it is still true after a moment. Returns whether the state
   *  changed now. A newer signal of any kind drops a pending one. */
  signal(s: StateSignal, confirm?: Confirm): boolean {
    if (this.disposed) return false;
    this.pending?.dispose();
    this.pending = null;
    if (confirm) {
      const pending: Disposable = this.d.schedule(() => {
        const shown = confirm.stillShown();
        if (typeof shown === 'boolean') return this.confirmed(pending, s, shown);
        // Still pending while the answer is on its way: a newer signal meanwhile drops it, as it would the timer.
        shown.then((yes) => this.confirmed(pending, s, yes)).catch(() => this.confirmed(pending, s, false));
      }, confirm.afterMs);
      this.pending = pending;
      return false;
    }
    return this.apply(s);
  }

  private confirmed(pending: Disposable, s: StateSignal, shown: boolean): void {
    if (this.pending !== pending || this.disposed) return;
    this.pending = null;
    if (shown) this.apply(s);
  }

  /** The person pressed Enter in the pane: an answer to a prompt, a new instruction after a turn, or a
   *  command to a pane whose state no one knew. */
  personAnswered(): boolean {
    if (this.cur.state !== 'needs-input' && this.cur.state !== 'idle' && this.cur.state !== 'unknown') return false;
    this.pending?.dispose();
    this.pending = null;
    return this.set({ state: 'working', source: 'terminal', text: null });
  }

  private apply(s: StateSignal): boolean {
    const cur = this.cur;
    if (cur.state === 'exited') return false;
    if (s.state === 'exited') return this.set(s);
    if (s.source === 'liveness') {
      // Its own words only: working, stalled, and idle that it said itself (an agent's own idle, a finished
      // turn, is not the liveness check's to take back).
      // An adopted pane's "progress" is only the adoption itself (its last board call is dated then): the
      // liveness check sees it only once it finds a lease's silence.
      if (cur.state === 'unknown') return s.state !== 'working' && this.set(s);
      const its = cur.state === 'working' || cur.state === 'stalled' || (cur.state === 'idle' && cur.source === 'liveness');
      if (its && (s.state === 'working' || s.state === 'stalled' || s.state === 'idle')) return this.set(s);
      // A shell at its prompt that holds work and makes no progress is stalled; output alone (the echo of a
      // typed line) does not make it working.
      if (cur.state === 'idle' && this.idleAtPrompt && s.state === 'stalled') return this.set(s);
      return false;
    }
    if (sourceRank(s.source) <= sourceRank(cur.source)) return this.set(s);
    // Only over `working`: after a finished turn a weaker "attention" signal is the CLI's idle reminder
    // (Claude's fires on a timer), not a question.
    if (s.state === 'needs-input' && cur.state === 'working') return this.set(s);
    // A weaker source cannot clear a stronger one's word, but it can move a stalled agent: liveness is the
    // weakest of all, and any other signal is fresher news of the agent than "nothing moved".
    if (cur.state === 'stalled') return this.set(s);
    return false;
  }

  private set(s: StateSignal): boolean {
    const before = this.cur;
    // A wait that names no prompt, said while a named one is on, is the same wait said again (Codex's program
    // status "blocked" follows the notification that named the command): it keeps the name.
    const text = s.state === 'needs-input' ? (cleanStateText(s.text) ?? (before.state === 'needs-input' ? before.text : null)) : null;
    if (before.state === s.state && before.text === text) {
      // The same state from a stronger source: keep its start, name the better source.
      // A stronger source is never the liveness check: what the launch presumed is now said.
      if (sourceRank(s.source) < sourceRank(before.source)) this.cur = { state: before.state, source: s.source, text: before.text, since: before.since };
      if (s.state === 'idle') this.idleAtPrompt = s.atPrompt === true;
      return false;
    }
    // The launch's guess stays a guess while only the liveness check speaks (working, stalled, idle).
    const presumed = before.presumed && s.source === 'liveness';
    this.cur = { state: s.state, source: s.source, text, since: this.d.wall(), ...(presumed ? { presumed } : {}) };
    if (before.state !== s.state) this.enteredAt = this.d.now();
    this.idleAtPrompt = s.state === 'idle' && s.atPrompt === true;
    this.d.onChange(this.cur, before);
    return true;
  }

  dispose(): void {
    this.disposed = true;
    this.pending?.dispose();
    this.pending = null;
  }
}
