import type { BoardService } from '../board/boardService.js';
import { failureNote, runVerify } from '../agents/verifyRunner.js';
import type { ClaimWorktrees } from './claimWorktrees.js';
import type { ProcessWhereabouts } from '../roster/whereabouts.js';
import { VERIFY_ACTOR, type Task } from '../../src-shared/board/model.js';
import { Limits } from '../../src-shared/board/limits.js';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { changedPins, pinnedPaths, type PinChanges } from './verifyPins.js';
import { profileOfAgent } from '../../src-shared/board/dispatch.js';
import type { AgentSandbox } from '../sandbox/agentSandbox.js';

interface VerifyDeps {
  board: BoardService;
  worktrees: ClaimWorktrees;
  folder: string;
  timeoutMs?: number;
  /** Where the verify command's process tree is tracked as the agent's pane while it runs. */
  whereabouts?: Pick<ProcessWhereabouts, 'trackVerify' | 'untrackVerify'>;
  /** The agents' sandboxes: a verify runs its agent's work, contained as that agent is. */
  sandbox?: Pick<AgentSandbox, 'wrapVerify'>;
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
  // The check is the person's: work that changes what verify runs is not verify's to approve.
  const pins = await pinsChanged(d, t, command);
  if (pins.files.length > 0) {
    const text = `Verify did not approve ${taskId}: its work changes ${pins.files.join(', ')}, which verify runs (\`${command}\` names it, or the Thread lists it). Verify takes those files from the base, never from the work it checks, so this change waits for a person's review.${pins.diff ? `\n${pins.diff}` : ''}`;
    await d.board.run((e) => e.userNote(taskId, clip(text), VERIFY_ACTOR));
    return;
  }
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
  const cwd = d.worktrees.workdirOf(t, d.folder);
  const outcome = await runVerify(command, cwd, d.timeoutMs, process.env, {
    started: (pid) => d.whereabouts?.trackVerify((root = pid), agentId),
    signal: stop.signal,
    contain: d.sandbox && ((argv) => d.sandbox?.wrapVerify(argv, cwd, profileOfAgent(agentId)) ?? argv),
  }).finally(() => {
    watch.dispose();
    if (root !== undefined) d.whereabouts?.untrackVerify(root);
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

/** The files verify runs (verifyPins.ts) that the task's work changes: its frozen commit, or its folder. */
function pinsChanged(d: VerifyDeps, t: Task, command: string): Promise<PinChanges> {
  const wt = t.worktree;
  if (!wt || !d.worktrees.git) return Promise.resolve({ files: [], diff: '' });
  const sha = t.submitted?.sha ?? t.record?.sha ?? wt.baseCommit;
  return changedPins(d.worktrees.workdirOf(t, d.folder), wt.base, wt.baseCommit, sha, pinnedPaths(command, d.board.state.settings.verifyFiles));
}

/** Text as a note takes it: printable and no longer than a note. */
const clip = (s: string): string => outputAsText(s).slice(0, Limits.maxNoteChars);
