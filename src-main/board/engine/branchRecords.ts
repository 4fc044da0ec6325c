import type { BranchRecord, LostRecord, Task } from '../../../src-shared/board/model.js';
import { USER } from '../../../src-shared/board/model.js';
import { ok, reject, type RejectionCode, type Result } from '../../../src-shared/board/result.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import { shortSha, strayRef } from '../../../src-shared/git/taskBranch.js';
import type { EngineCore } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';
import type { Fence } from './fence.js';

/** Branch records: where the board says each task's branch is, who moved it there, and what reached the
 *  remote. A move the board never recorded is not the task's work. */
export class BranchRecords {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
    private readonly fence: Fence,
  ) {}

  /**
   * The branch of the holder's grant moved from `from` to `to` (git reports it after the update; the host has
   * checked that the branch is at `to` and read its tree). Recorded only while the claim is live, not frozen
   * in review, and the move starts where the board last recorded the branch: a commit that lands after its
   * claim ended, or on top of something the board never recorded, is not the task's work.
   */
  recordBranch(agentId: string, taskId: string, token: number | undefined, move: { ref: string; from: string; to: string; tree: string }): Result<BranchRecord> {
    const c = this.fence.check(agentId, taskId, token, 'record');
    if (!c.ok) return c;
    const t = c.value.task;
    // Idempotent by its natural key (task, commit): a record of the commit the board already has (a report
    // sent again after its answer was lost) is that record, not a move off it to be put aside.
    if (t.record && t.record.sha === move.to && t.record.tree === move.tree && move.ref === `refs/heads/${t.worktree?.branch}`) return ok(t.record);
    const why = this.offRecord(t, move.ref, move.from);
    if (why) return this.limits.refuse(agentId, taskId, token ?? null, 'record', why.code, why.message);
    const record: BranchRecord = { sha: move.to, tree: move.tree, token: c.value.claim.token, by: agentId };
    const recorded = this.emitRecord(taskId, t.record?.sha ?? null, record);
    this.core.extend(recorded, c.value.claim, 'write');
    return ok(record);
  }

  /**
   * A person committed by hand in a task's folder (the host checked that the committing process is in no
   * agent's pane). Recorded under the claim it was made in, if the branch is the latest grant's and starts
   * at the record; a person's commit never needs a lease.
   */
  recordByPerson(taskId: string, move: { ref: string; from: string; to: string; tree: string }, by: string = USER): Result<BranchRecord> {
    const f = this.core.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    if (t.record && t.record.sha === move.to && t.record.tree === move.tree && move.ref === `refs/heads/${t.worktree?.branch}`) return ok(t.record);
    const why = this.offRecord(t, move.ref, move.from, true);
    if (why) return reject(why.code, why.message);
    const record: BranchRecord = { sha: move.to, tree: move.tree, token: t.worktree?.token ?? t.claim?.token ?? 0, by };
    this.emitRecord(taskId, t.record?.sha ?? null, record);
    return ok(record);
  }

  /** Why a move of `ref` from `from` is not the task's work now, or null when it is. */
  offRecord(t: Task, ref: string, from: string, person = false): { code: RejectionCode; message: string } | null {
    const wt = t.worktree;
    if (!wt) return { code: 'bad-state', message: `${t.id} has no worktree` };
    if (ref !== `refs/heads/${wt.branch}`) return { code: 'not-holder', message: `${ref} is not the branch of ${t.id}'s current claim (${wt.branch})` };
    // Frozen for everyone: approval merges what `done` named, and a record taken now, even a person's,
    // would put work under the claim that said done that it never saw (a forged person's record did).
    if (t.state === 'review' && t.submitted)
      return {
        code: 'bad-state',
        message: person
          ? `${t.id} is in review: its work was frozen at ${shortSha(t.submitted.sha)} when its agent said done, and approval merges exactly that; a commit now is not part of it. Reject it to work on, then commit`
          : `${t.id} is in review: its work was frozen at ${shortSha(t.submitted.sha)} when you said done; commits now are not part of it. Ask for it back (reject) to work on`,
      };
    if (t.state !== 'claimed' && t.state !== 'review' && !person) return { code: 'bad-state', message: `${t.id} ${isInState(t.state)}` };
    // A branch made before the board kept records has none yet: its first move starts the record.
    if (t.record && t.record.sha !== from)
      return {
        code: 'off-record',
        message: `${wt.branch} is at ${shortSha(from)}, which the board never recorded for ${t.id} (its record is ${shortSha(t.record.sha)}): a commit that landed outside the fence, or one whose record did not finish. Forkbench moves it aside to ${strayRef(wt.branch, '')} and puts the branch back at ${shortSha(t.record.sha)}; your files are untouched, so commit again`,
      };
    return null;
  }

  /** Record `record` as the task's branch, moved from `from`, naming this host on a shared board. */
  emitRecord(taskId: string, from: string | null, record: BranchRecord): Task {
    const here = this.core.here;
    return this.core.step({ kind: 'branch-recorded', taskId, from, record, ...(here ? { host: here } : {}) });
  }

  /**
   * The host pushed `record` to the Thread's remote. Taken only while the task's record is still `current`
   * (the record the host found `record` to be, or to be an ancestor of, when it pushed): a push that finished
   * after the record moved elsewhere (rewound, or recorded on another host) is not the task's line.
   */
  recordPushed(taskId: string, record: BranchRecord, current: string): Result<null> {
    const f = this.core.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    if (t.record?.sha !== current) return reject('stale-token', `${taskId}'s record is ${shortSha(t.record?.sha ?? '')} now, not ${shortSha(current)}: the push of ${shortSha(record.sha)} is not its line any more`);
    if (t.pushed?.sha === record.sha) return ok(null);
    this.core.emit({ kind: 'branch-pushed', taskId, record });
    return ok(null);
  }

  /**
   * A claim on this host cannot start at the task's record: its commits never reached the remote. The
   * record goes back to `to` (the last pushed record, or the base's head when none was), if it is still `from`
   * (a record that arrived meanwhile is the one to start from) and the claim `token` it is rewound for is still
   * the task's (a claim reassigned meanwhile may already work from the record elsewhere: its folder must not
   * have the record moved under it), and the history names each lost commit.
   */
  rewindRecord(taskId: string, from: string, to: BranchRecord, lost: readonly LostRecord[], by: string, token: number): Result<null> {
    const f = this.core.find(taskId);
    if (!f.ok) return f;
    if (f.value.record?.sha !== from) return reject('stale-token', `${taskId}'s record moved to ${shortSha(f.value.record?.sha ?? '')} meanwhile`);
    if (f.value.claim?.token !== token) return reject('stale-token', `the claim ${token} on ${taskId} is over: its record stays ${shortSha(from)}`);
    const wasPushed = f.value.pushed?.sha === to.sha;
    this.core.emit({ kind: 'record-rewound', taskId, from, to, lost: [...lost], by });
    const named = lost.map((l) => `${shortSha(l.sha)} (recorded by ${l.by}${l.host ? ` on host ${l.host.name} [${l.host.id.slice(0, 8)}]` : ''})`);
    const start = wasPushed ? `the last record that reached the remote, ${shortSha(to.sha)}` : `the base branch's head ${shortSha(to.sha)} (no record of the task ever reached the remote)`;
    this.core.emit({
      kind: 'note',
      taskId,
      by,
      text: `Lost with the host that recorded them (never on the remote): ${named.length ? named.join(', ') : 'none named'}. This claim starts at ${start}.`.slice(0, Limits.maxNoteChars),
    });
    return ok(null);
  }

  /** The host put a task's branch back at its record after moving an unrecorded head aside. */
  recordRepair(taskId: string, stray: string, by: string): Result<null> {
    const f = this.core.find(taskId);
    if (!f.ok) return f;
    this.core.emit({ kind: 'note', taskId, by, text: `The branch was at ${shortSha(stray)}, which the board never recorded: it was moved aside to ${strayRef(f.value.worktree?.branch ?? f.value.parked.at(-1)?.branch ?? taskId, stray)} and the branch put back at ${shortSha(f.value.record?.sha ?? '')}. Nothing was deleted.` });
    return ok(null);
  }
}
