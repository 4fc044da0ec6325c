import { profileOfAgent } from '../../src-shared/board/dispatch.js';
import type { AgentSandbox } from '../sandbox/agentSandbox.js';
import type { QueueEntry, Task } from '../../src-shared/board/model.js';
import { runVerify, VerifyConstants } from '../agents/verifyRunner.js';
import type { BoardService } from '../board/boardService.js';
import type { WorktreeManager } from '../git/worktreeManager.js';
import type { ProcessWhereabouts } from '../roster/whereabouts.js';
import type { ApprovalSeal } from './approvalSeal.js';
import type { ClaimWorktrees } from './claimWorktrees.js';
import type { LandingSteps } from './mergeQueue.js';
import { pinnedPaths, restorePins } from './verifyPins.js';

/** The folder under the Thread's data folder where the queue checks out each merge it verifies (one folder per
 *  board inside: boardNames.ts). */
export { QUEUE_CHECKOUTS } from '../git/boardNames.js';

interface GitLandingDeps {
  board: BoardService;
  worktrees: ClaimWorktrees;
  git: WorktreeManager;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** This host's approval key: what it queued, it lands. */
  seal: ApprovalSeal;
  /** Where the verify's process tree is tracked as its last holder's pane while it runs (as verifyOnDone does). */
  whereabouts?: Pick<ProcessWhereabouts, 'trackVerify' | 'untrackVerify'>;
  /** The agents' sandboxes: the check runs the task's code, contained as its agent was (verifyOnDone.ts). */
  sandbox?: Pick<AgentSandbox, 'wrapVerify'>;
}

/**
 * The merge queue's steps for a Thread with git (mergeQueue.ts says the order): the merge of the frozen sha
 * onto the base as it is now (TaskReview.candidate), the verify command run on that merge in a detached
 * checkout of its own under the Thread's data folder (neither the agent's folder nor the person's, so nothing
 * either has uncommitted changes what is checked), the base moved by compare-and-swap, and approval.
 */
export function gitLandingSteps(d: GitLandingDeps): LandingSteps {
  const running = new Set<number>();
  return {
    candidate: (t, approved) => d.git.review.candidate(t.id, t.title, d.board.state.settings.remote, approved),
    landed: (t, merge) => d.git.review.baseHas(t.worktree?.base ?? t.parked[0]?.base ?? '', merge, d.board.state.settings.remote),
    async verify(t: Task, c, command) {
      const dir = d.git.names.queueCheckoutOf(t.id);
      await d.git.review.checkoutAt(dir, c.merge ?? c.onto);
      // The files the check runs are the base's, whatever the work did to them (verifyPins.ts).
      await restorePins(d.git.workdirOf(dir), c.onto, c.merge ?? c.onto, pinnedPaths(command, d.board.state.settings.verifyFiles));
      // It runs the task's code, which an agent wrote: as that agent's, so nothing in it passes for a person.
      const agentId = t.lastClaim?.agentId ?? t.claim?.agentId;
      let root: number | undefined;
      // An entry taken out (or sent back) while its verify runs is ended at once, its whole tree with it: a
      // verify that never ends must not hold the queue (issue 42, item 4); the queue then sees it gone.
      const stop = new AbortController();
      const watch = d.board.onEvent(() => !sameEntry(d.board.state.tasks.get(t.id)?.queued, t.queued) && stop.abort());
      try {
        const cwd = d.git.workdirOf(dir);
        return await runVerify(command, cwd, d.timeoutMs ?? VerifyConstants.defaultTimeoutMs, d.env ?? process.env, {
          started: (pid) => {
            running.add((root = pid));
            if (agentId) d.whereabouts?.trackVerify(pid, agentId);
          },
          signal: stop.signal,
          contain: d.sandbox && ((argv) => d.sandbox?.wrapVerify(argv, dir, agentId && profileOfAgent(agentId)) ?? argv),
        });
      } finally {
        watch.dispose();
        if (root !== undefined) {
          running.delete(root);
          d.whereabouts?.untrackVerify(root);
        }
        await d.git.review.removeCheckout(dir);
      }
    },
    sealed: (t, entry) => d.seal.holds(d.board.state.threadId, t.id, entry),
    land: (t, c) => d.git.review.landCandidate(t.id, c, d.board.state.settings.remote),
    approve: (t, c, by, tries) => d.worktrees.approveLanded(t.id, by, c, tries),
    /** The Thread is closing: a verify still running is ended (its group), and its entry lands anew next start. */
    dispose() {
      for (const pid of running) {
        try {
          process.kill(-pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
    },
  };
}

/** The same queue entry (a person's queueing), whatever the queue noted on it since (its landing). */
const sameEntry = (a: QueueEntry | null | undefined, b: QueueEntry | null | undefined): boolean => !!a && !!b && (a.seq ?? null) === (b.seq ?? null) && a.at === b.at && a.by === b.by;
