import type { AgentStateInfo } from '../../src-shared/agents/agentLife.js';
import type { BoardEvent, BoardEventKind } from '../../src-shared/board/events.js';
import { dispatchOn } from '../../src-shared/board/dispatch.js';
import { DisposableStore, globalTimers, type TimerHandle, type TimerSource } from '../../src-shared/lifecycle/disposableStore.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { BoardService } from '../board/boardService.js';

/** Events after which an idle agent may have a task to take: a task became ready or changed who may take
 *  it, an agent let go of what it held, a setting changed. Any other event (renewals, notes, records) changes
 *  neither what is ready nor who holds nothing, so it starts no pass. */
const WAKES: ReadonlySet<BoardEventKind> = new Set<BoardEventKind>([
  'task-added',
  'task-copied',
  'after-set',
  'for-set',
  'dispatch-set',
  'settings-set',
  'claim-ended',
  'approved',
  'returned',
  'unblocked',
  'reset',
  'reassign',
  // A budget raised (issue 47): its task may be dispatched again.
  'budget-set',
]);

export interface DispatcherDeps {
  board: BoardService;
  /** The agents this host runs and that are alive: only their idleness is known here, and only their host
   *  may type into their panes. */
  agents: () => Iterable<string>;
  /** Each agent's state from its signals (AgentStates): the one source of "idle". */
  stateOf: (agentId: string) => AgentStateInfo | null;
  /** Fires when an agent's state changes. */
  onState: (fn: (agentId: string, next: AgentStateInfo) => void) => Disposable;
  timers?: TimerSource;
  warn?: (message: string) => void;
}

/**
 * The one owner of dispatch (issue 34): when an agent of this host that takes tasks when idle is idle (its
 * state from its signals: the CLI's hook, its terminal, its screen; never a guess from silence, and never
 * while it waits for the person) and holds nothing, it asks the board to grant it the next ready task it may
 * take (LeaseEngine.dispatch decides which, as one step, so two agents idle at once never get one task). The
 * grant is an event like a person's drag, and Assignments types it into the pane as it does a drag.
 *
 * Passes are one at a time and coalesced: a pass asked for while one runs runs once after it. When every ready
 * task an idle agent may take is backing off from it, one timer wakes the next pass as the earliest back-off
 * ends. Disposing stops the timer and the listeners; a pass in flight finishes its one board write.
 */
export class Dispatcher {
  private readonly store: DisposableStore;
  private running = false;
  private again = false;
  private wake: TimerHandle | null = null;

  constructor(private readonly d: DispatcherDeps) {
    this.store = new DisposableStore(d.timers ?? globalTimers);
    this.store.add(d.onState((_agentId, next) => next.state === 'idle' && this.soon()));
    this.store.add(d.board.onEvent((e) => this.follow(e)));
    this.soon();
  }

  private follow(e: BoardEvent): void {
    if (WAKES.has(e.kind)) this.soon();
  }

  /** A pass, after whatever else this turn of the event loop decides (one event often comes with others). */
  soon(): void {
    if (this.store.isDisposed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    queueMicrotask(() => void this.pass());
  }

  private async pass(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.grantIdle();
      } while (this.again && !this.store.isDisposed);
    } catch (err) {
      this.d.warn?.(`dispatch: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.running = false;
    }
  }

  /** Every idle dispatching agent that holds nothing, in turn: one board write each. */
  private async grantIdle(): Promise<void> {
    const { board } = this.d;
    let wakeAt: number | null = null;
    for (const agentId of [...this.d.agents()]) {
      if (this.store.isDisposed || board.readOnlyReason !== null) return;
      if (!this.wants(agentId)) continue;
      const r = await board.run((e) => e.dispatch(agentId));
      if (r.ok) continue;
      const pick = board.engine.dispatchPick(agentId);
      if (pick.taskId === null && pick.wakeAt !== null) wakeAt = Math.min(wakeAt ?? Infinity, pick.wakeAt);
    }
    this.armWake(wakeAt);
  }

  /** Dispatch on, idle by its signals, holding nothing: an agent the board should give a task now. */
  private wants(agentId: string): boolean {
    const { engine } = this.d.board;
    return dispatchOn(engine.state.settings, agentId) && this.d.stateOf(agentId)?.state === 'idle' && engine.claimsOf(agentId).length === 0;
  }

  private armWake(at: number | null): void {
    this.wake?.dispose();
    this.wake = null;
    if (at === null || this.store.isDisposed) return;
    const ms = Math.max(0, at - this.d.board.clock.now());
    // `unref`: a back-off ending is no reason to keep a host process alive.
    this.wake = this.store.timeout(() => this.soon(), ms, { unref: true });
  }

  dispose(): void {
    this.wake = null;
    this.store.dispose();
  }
}
