import type { BoardService } from '../board/boardService.js';
import { failureNote, runVerify } from '../agents/verifyRunner.js';
import type { ClaimWorktrees } from './claimWorktrees.js';
import type { Roster } from '../roster/roster.js';
import { VERIFY_ACTOR } from '../../src-shared/board/model.js';

interface VerifyDeps {
  board: BoardService;
  worktrees: ClaimWorktrees;
  folder: string;
  timeoutMs?: number;
  /** Where the verify command's process tree is tracked as the agent's pane while it runs. */
  roster?: Pick<Roster, 'trackVerify' | 'untrackVerify'>;
}

/** The agents' socket's `onDone` hook: each done is verified in the background, and a verify that could not
 *  run is said (unless its Thread closed meanwhile: then it has nowhere to report). */
export function verifyOnDone(d: VerifyDeps & { warn?: (message: string) => void }): (agentId: string, taskId: string) => void {
  return (agentId, taskId) =>
    void verifyDone(d, agentId, taskId).catch((err: Error) => {
      if (!d.worktrees.isClosed) d.warn?.(`forkbench: verify of ${taskId} failed to run: ${err.message}`);
    });
}

/**
 * An agent said done: run the task's (or the Thread's) verify command in the work's folder. Pass → approve
 * (which merges); fail → back to the agent with the output. Without a command the task waits for a person.
 */
async function verifyDone(
  d: VerifyDeps,
  agentId: string,
  taskId: string,
): Promise<void> {
  const t = d.board.state.tasks.get(taskId);
  const command = t?.verify ?? d.board.state.settings.verify;
  if (!t || !command) return;
  // A test suite can run for minutes: say so on the board, so nobody wonders why the task sits in review.
  await d.board.run((e) => e.userNote(taskId, `Verifying with \`${command}\`…`, VERIFY_ACTOR));
  // The work under review is in the task's worktree, not in the shared folder.
  // It runs the task's code, which the agent wrote: as the agent's, so nothing in it passes for a person.
  let root: number | undefined;
  // Only judge the claim that said done: a task that moved on meanwhile (a person approved or rejected it,
  // it was reassigned) needs this verify no more, and it is ended at once, its whole tree with it.
  const current = () => {
    const now = d.board.state.tasks.get(taskId);
    return !!now && now.state === 'review' && (!now.claim || now.claim.agentId === agentId);
  };
  const stop = new AbortController();
  const watch = d.board.onEvent(() => !current() && stop.abort());
  const outcome = await runVerify(command, d.worktrees.workdirOf(t, d.folder), d.timeoutMs, process.env, {
    started: (pid) => d.roster?.trackVerify((root = pid), agentId),
    signal: stop.signal,
  }).finally(() => {
    watch.dispose();
    if (root !== undefined) d.roster?.untrackVerify(root);
  });
  if (!current()) return;
  if (outcome.passed) {
    await d.board.run((e) => e.userNote(taskId, `Verify \`${command}\` passed in ${(outcome.durationMs / 1000).toFixed(1)} s.`, VERIFY_ACTOR));
    // A refused merge is already a note on the task, which stays in review for a person.
    await d.worktrees.approve(taskId, VERIFY_ACTOR).catch(() => undefined);
  } else {
    await d.board.run((e) => e.rejectReview(taskId, failureNote(command, outcome), VERIFY_ACTOR));
  }
}
