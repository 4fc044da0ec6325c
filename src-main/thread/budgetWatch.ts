import type { BoardEvent } from '../../src-shared/board/events.js';
import { compareTaskIds } from '../../src-shared/board/reducer.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { budgetNotice, type Notice } from '../../src-shared/notices/notices.js';
import { budgetLevel, budgetText, type BudgetLevel } from '../../src-shared/usage/budgets.js';
import { quotedBoardText } from '../../src-shared/text/controlChars.js';
import type { BoardService } from '../board/boardService.js';

/** What the watch needs of the Thread: its board, its notices, and its own agents' panes. */
export interface BudgetWatchDeps {
  readonly key: string;
  readonly board: BoardService;
  /** A notice raised as the Thread's own (ThreadNotices), given the time its id is made with. */
  raise(make: (at: number) => Notice): void;
  withdraw(about: string): void;
  /** Tell an agent of this host in its pane (PaneRelay.tell): nothing for another host's agent or a gone one. */
  tell(agentId: string, text: string): Promise<void>;
}

const RANK: Record<BudgetLevel, number> = { under: 0, notice: 1, stop: 2 };
/** The Thread's own budget, keyed apart from any task id (ids are T-<n>). */
const THREAD = '*';

/**
 * Budgets as they are spent (issue 47, item 3): the host's one watcher of them. After each usage event (and each
 * budget a person sets) it compares each budget's level with the one it last told; on a rise it tells the person
 * once (a notice at 80 %, another when spent) and, once spent, tells the agents working under it in their panes
 * (the board itself holds the task back from dispatch: dispatch.ts); on a fall (a budget raised) it withdraws
 * the notice, so a later rise is told again. On a shared board every host watches the same events and tells
 * its own agents; the notices are each host's, as all notices are.
 *
 * The levels told start as the board's levels when the Thread opens, so a restart tells nothing twice.
 */
export class BudgetWatch {
  private readonly store = new DisposableStore();
  /** Per budgeted task (and THREAD), the level last told: only scopes with a budget, so a handful. */
  private readonly told = new Map<string, BudgetLevel>();

  constructor(private readonly d: BudgetWatchDeps) {
    const b = d.board.state;
    for (const t of b.tasks.values()) if (t.budget) this.told.set(t.id, budgetLevel(t.cost, t.budget));
    this.told.set(THREAD, budgetLevel(b.costs.thread, b.settings.budget));
    this.store.add(d.board.onEvent((e) => this.follow(e)));
  }

  dispose(): void {
    this.store.dispose();
    this.told.clear();
  }

  private follow(e: BoardEvent): void {
    if (e.kind === 'usage') {
      if (e.taskId !== null) this.check(e.taskId);
      this.check(null);
    } else if (e.kind === 'budget-set') this.check(e.taskId);
  }

  /** The budget of `taskId` (null: the Thread's) as it is now, against what was told. */
  private check(taskId: string | null): void {
    const b = this.d.board.state;
    const t = taskId === null ? null : b.tasks.get(taskId);
    if (taskId !== null && !t) return;
    const budget = t ? t.budget : b.settings.budget;
    const spent = t ? t.cost : b.costs.thread;
    const now = budgetLevel(spent, budget);
    const scope = taskId ?? THREAD;
    const was = this.told.get(scope) ?? 'under';
    if (budget) this.told.set(scope, now);
    else this.told.delete(scope);
    if (RANK[now] < RANK[was]) this.d.withdraw(t ? `budget:${t.id}` : `budget:thread:${this.d.key}`);
    if (RANK[now] <= RANK[was] || now === 'under' || !budget) return;
    const words = budgetText(spent, budget);
    this.d.raise((at) => budgetNotice(this.d.key, t ? { id: t.id, title: t.title } : null, now, words, at));
    if (now !== 'stop') return;
    if (t) {
      // Its holder, whether it works on it or waits in review: either way nothing more should be spent on it.
      if (t.claim) void this.d.tell(t.claim.agentId, stopWords(`${t.id} ${quotedBoardText(t.title)} has spent its budget (${words})`, [t.id]));
      return;
    }
    const held = new Map<string, string[]>();
    for (const x of b.tasks.values()) if (x.claim && x.state === 'claimed') held.set(x.claim.agentId, [...(held.get(x.claim.agentId) ?? []), x.id]);
    for (const [agentId, ids] of held) void this.d.tell(agentId, stopWords(`This Thread has spent its budget (${words})`, ids.sort(compareTaskIds)));
  }
}

/** What an agent is told when the budget it works under is spent: stop and wait, the person decides. */
function stopWords(what: string, ids: readonly string[]): string {
  return `${what}. Stop working on ${ids.join(', ')} now and wait: the person decides whether to raise the budget or stop you. Until then the board dispatches it to no agent.`;
}
