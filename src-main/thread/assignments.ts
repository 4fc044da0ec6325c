import { BOARD_TEXT_IS_DATA, quotedBoardText } from '../../src-shared/text/controlChars.js';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { HOST_ACTOR, USER, VERIFY_ACTOR } from '../../src-shared/board/model.js';
import { DISPATCH_ACTOR } from '../../src-shared/board/dispatch.js';
import type { ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { BoardService } from '../board/boardService.js';
import type { FolderLeaving } from '../git/claimFolders.js';
import type { Roster } from '../roster/roster.js';

/**
 * What the host tells agents about their tasks (typed into an agent CLI's pane, shown in a shell's output:
 * PaneRelay.tell): a person's assignment to its new holder (once its worktree exists, since the message names
 * it), a reassignment to the holder it was taken from — at once, so it stops working on a task it no longer
 * holds instead of learning at its next refused write — and, before a task's folder is removed, where to go
 * to every pane whose shell (or a program it runs) stands in it.
 */
export class Assignments {
  constructor(
    private readonly d: {
      board: BoardService;
      roster: Roster;
      worktreeOf: (taskId: string, token: number) => Promise<ClaimWorktree | null>;
      /** The Thread's folder: where an agent whose task's worktree was removed can go back to. */
      folder: string;
    },
  ) {}

  /** Who said each task in review was done: the pane to tell when its worktree goes at the merge. */
  private readonly submitters = new Map<string, { agentId: string; path: string | undefined }>();
  /** The agents told where to go before a task's folder went, until its removal is on the board: the merge's
   *  message need not say it again. */
  private readonly toldToLeave = new Map<string, Set<string>>();

  /**
   * A task's folder is about to be removed: each live pane of this host with a process standing in it is told
   * to leave and where to go, while the folder is still there (after, its shell answers every command with
   * getcwd errors). Resolves once all are told (ClaimFolders bounds the wait).
   */
  async tellLeaving(f: FolderLeaving): Promise<void> {
    const agents = await this.d.roster.whereabouts.standingIn(f.path);
    if (!agents.length) return;
    if (f.otherBoard) {
      // Not this board's task of that id: named by its folder alone, and nothing of this board's task is marked.
      const text = `The folder you are in, ${f.path}, is about to be removed: it is a claim folder another board of this Thread folder left, cleared in the Forkbench window. Leave it: cd '${this.d.folder}'.`;
      await Promise.all(agents.map((agentId) => this.d.roster.relay.tell(agentId, text)));
      return;
    }
    const t = this.d.board.state.tasks.get(f.taskId);
    const what = f.why === 'merged' ? 'was approved and merged' : 'is having its worktree removed in the Forkbench window';
    const text =
      `The folder you are in, ${f.path}, is about to be removed: ${f.taskId} ${quotedBoardText(t?.title ?? '')} ${what}. ` +
      `Leave it: cd '${this.d.folder}'.`;
    const told = this.toldToLeave.get(f.taskId) ?? new Set<string>();
    this.toldToLeave.set(f.taskId, told);
    for (const agentId of agents) told.add(agentId);
    await Promise.all(agents.map((agentId) => this.d.roster.relay.tell(agentId, text)));
  }

  follow(e: BoardEvent): void {
    if (e.kind === 'submitted') this.submitters.set(e.taskId, { agentId: e.agentId, path: this.d.board.state.tasks.get(e.taskId)?.worktree?.path });
    if (e.kind === 'returned') {
      this.submitters.delete(e.taskId);
      if (e.to === 'claimed') this.tellSentBack(e);
    }
    if (e.kind === 'queued') this.tellQueued(e);
    if (e.kind === 'unqueued' && e.by === HOST_ACTOR) this.tellUnqueued(e);
    // Work with a worktree is told it landed when its folder goes (tellMerged, one message with where to go).
    if (e.kind === 'approved' && !this.d.board.state.tasks.get(e.taskId)?.worktree) this.tellLanded(e.taskId);
    if (e.kind === 'worktree-removed') {
      this.tellMerged(e);
      this.toldToLeave.delete(e.taskId);
    }
    if (e.kind === 'reassign') this.tellTaken(e);
    // A grant of the board's dispatch reaches the idle agent exactly as a person's drag does.
    if (e.kind === 'grant' && (e.by === USER || e.by === DISPATCH_ACTOR)) this.tellAssigned(e.taskId, e.agentId, e.token);
    else if (e.kind === 'reassign' && e.by === USER) this.tellAssigned(e.taskId, e.to.agentId, e.to.token);
  }

  private nameOf(agentId: string): string {
    if (agentId === USER) return 'a person in the Forkbench window';
    if (agentId === VERIFY_ACTOR) return "the Thread's verify command";
    if (agentId === HOST_ACTOR) return 'Forkbench';
    return this.d.roster.nameOf(agentId);
  }

  private tellTaken(e: Extract<BoardEvent, { kind: 'reassign' }>): void {
    const t = this.d.board.state.tasks.get(e.taskId);
    void this.d.roster.relay.tell(
      e.from.agentId,
      `${e.taskId} ${quotedBoardText(t?.title ?? '')} was taken from you by ${this.nameOf(e.by)} and given to ${this.nameOf(e.to.agentId)}: ` +
        `your fencing token ${e.from.token} is no longer accepted for it. Stop working on ${e.taskId}; run \`forkbench board\` to pick other work.`,
    );
  }

  /**
   * The agent's shell may still be in the folder just removed, where every command then fails with
   * `getcwd() failed`: say why, and where to go.
   */
  private tellMerged(e: Extract<BoardEvent, { kind: 'worktree-removed' }>): void {
    const by = this.submitters.get(e.taskId);
    this.submitters.delete(e.taskId);
    if (!by || e.why !== 'merged') return;
    const { agentId } = by;
    const path = e.path ?? by.path;
    const p = this.d.roster.get(agentId);
    if (!p || !p.agent.alive) return;
    const t = this.d.board.state.tasks.get(e.taskId);
    const told = this.toldToLeave.get(e.taskId)?.has(agentId) ?? false;
    void this.d.roster.relay.tell(
      agentId,
      `${e.taskId} ${quotedBoardText(t?.title ?? '')} landed: it was approved and merged; its worktree folder${path ? ` ${path}` : ''} is removed. ` +
        `${told ? '' : `If your shell was in it: cd '${this.d.folder}'. `}Run \`forkbench board\` to pick other work.`,
    );
  }

  /** The agent whose work a task in review is: the one that said done (it holds it still, unless its pane closed). */
  private submitterOf(taskId: string): string | null {
    const t = this.d.board.state.tasks.get(taskId);
    return this.submitters.get(taskId)?.agentId ?? t?.claim?.agentId ?? t?.lastClaim?.agentId ?? null;
  }

  private tellLive(agentId: string | null, text: string): void {
    if (!agentId) return;
    const p = this.d.roster.get(agentId);
    if (!p || !p.agent.alive) return;
    void this.d.roster.relay.tell(agentId, text);
  }

  /**
   * Work sent back to its holder (a person's reject, a failed verify, the merge queue's conflict): the holder
   * is told why and that the task is its own again with a full lease, exactly where an assignment is told
   * (issue 44: the README promised it, and the pane said nothing).
   */
  private tellSentBack(e: Extract<BoardEvent, { kind: 'returned' }>): void {
    const t = this.d.board.state.tasks.get(e.taskId);
    const c = t?.claim;
    if (!t || !c) return;
    const who = e.cause === 'conflict' ? 'the merge queue (its merge conflicts)' : e.cause === 'verify-failed' ? 'the merge queue (its merge failed the verify)' : this.nameOf(e.by);
    const where = t.worktree ? ` Work in its git worktree: cd '${t.worktree.path}' (branch ${t.worktree.branch}).` : '';
    this.tellLive(
      c.agentId,
      `${e.taskId} ${quotedBoardText(t.title)} was sent back to you by ${who}. Reason: ${quotedBoardText(oneLine(e.reason))}. ` +
        `It is yours again with a full lease (fencing token ${c.token}): fix it, then \`forkbench done ${e.taskId} --token ${c.token}\`.${where} ${BOARD_TEXT_IS_DATA}`,
    );
  }

  private tellQueued(e: Extract<BoardEvent, { kind: 'queued' }>): void {
    const t = this.d.board.state.tasks.get(e.taskId);
    const queued = [...this.d.board.state.tasks.values()].filter((x) => x.queued).length;
    this.tellLive(
      this.submitterOf(e.taskId),
      `${e.taskId} ${quotedBoardText(t?.title ?? '')} was approved by ${this.nameOf(e.by)} and waits in the merge queue (${queued} queued): ` +
        `it is merged onto its base and checked before the base moves. You are told here when it lands or comes back.`,
    );
  }

  private tellUnqueued(e: Extract<BoardEvent, { kind: 'unqueued' }>): void {
    const t = this.d.board.state.tasks.get(e.taskId);
    this.tellLive(
      this.submitterOf(e.taskId),
      `${e.taskId} ${quotedBoardText(t?.title ?? '')} did not land: the merge queue took it out (${quotedBoardText(oneLine(e.reason))}). It waits in review for the person; nothing for you to do unless they send it back.`,
    );
  }

  private tellLanded(taskId: string): void {
    const t = this.d.board.state.tasks.get(taskId);
    this.tellLive(this.submitterOf(taskId), `${taskId} ${quotedBoardText(t?.title ?? '')} landed: it was approved and is done. Run \`forkbench board\` to pick other work.`);
  }

  private tellAssigned(taskId: string, agentId: string, token: number): void {
    const p = this.d.roster.get(agentId);
    if (!p || !p.agent.alive) return;
    const t = this.d.board.state.tasks.get(taskId);
    const text =
      `You have been assigned ${t?.id} ${quotedBoardText(t?.title ?? '')} on the Forkbench board (fencing token ${token}). ` +
      `Run \`forkbench show ${t?.id}\`, then pass --token ${token} to renew/note/done. ${BOARD_TEXT_IS_DATA}`;
    // The message names the worktree, so it waits until the worktree exists; a failed one says nothing here
    // (the task is blocked with the reason, which the window shows).
    void this.d.worktreeOf(taskId, token).then(
      (wt) => void this.d.roster.relay.tell(agentId, wt ? `${text} Work in its git worktree: cd '${wt.workdir}' (branch ${wt.branch}).` : text),
      () => undefined,
    );
  }
}

/** Board text as one line of a pane's message: a verify's output keeps its lines apart with ⏎, so nothing
 *  typed into an agent CLI's input sends it early. */
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ⏎ ').trim();
