import type { BranchRecord, LostRecord } from '../../src-shared/board/model.js';
import { HOST_ACTOR } from '../../src-shared/board/model.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { realTimers, type Timers } from '../base/timers.js';
import { firstLine, type TaskRemote } from './taskRemote.js';
import { WorktreeError, type TaskRepo } from './taskRepo.js';

export const ArrivalConstants = {
  /** How long a claim waits for the board to say its record reached the remote, when the record is not here
   *  and not there: the host that recorded it pushes at once, and a task's few commits take well under a few
   *  seconds even on a slow link; 30 s also covers a retry after a blip. A host that is gone never says so,
   *  and the claim does not wait longer on it. */
  pushWaitMs: 30_000,
  /** Records that move while a claim arrives (the old holder's late commit) are followed this many times,
   *  then the claim fails with the reason rather than chase a host that keeps recording. */
  maxRounds: 5,
} as const;

export interface ArrivalTiming {
  pushWaitMs?: number;
  timers?: Timers;
}

/**
 * A claim on this host starts at the board's record: a commit another host recorded is fetched from the
 * Thread's remote (refs/forkbench/tasks/<board>/T-n) before the claim's folder is made. If it never got there (its host
 * died mid-push, or is cut off), the board is given a bounded time to say it was pushed, and then the claim
 * starts at the last record that was: the record moves back (record-rewound) and the task's history names
 * each recorded commit left behind, with who recorded it on which host. Never silently.
 */
export class RecordArrival {
  private readonly waitMs: number;
  private readonly timers: Timers;

  constructor(
    private readonly r: TaskRepo,
    private readonly remote: () => TaskRemote | null,
    timing: ArrivalTiming = {},
  ) {
    this.waitMs = timing.pushWaitMs ?? ArrivalConstants.pushWaitMs;
    this.timers = timing.timers ?? realTimers;
  }

  /** Make the task's record a commit of this clone for the claim `token`, fetching or rewinding as needed. A
   *  claim that ends while it waits gets nothing here: the record is left for the claim that holds the task. */
  async arrive(taskId: string, token: number): Promise<void> {
    for (let round = 0; round < ArrivalConstants.maxRounds; round++) {
      if (this.r.board.state.tasks.get(taskId)?.claim?.token !== token) throw ended(taskId, token);
      const rec = this.r.board.state.tasks.get(taskId)?.record;
      if (!rec || (await this.has(rec))) return;
      const remote = this.remote();
      if (!remote)
        throw new WorktreeError('git', `${taskId}'s record ${shortSha(rec.sha)} is not in ${this.r.repo.root}, and this Thread has no remote to fetch it from: nothing was changed.`);
      const why = await remote.fetchTask(taskId);
      if (await this.has(rec)) return;
      // Not on the remote: its host may be mid-push. The board says when it lands, or the wait ends; the
      // holder is told what it waits for, where a slow checkout's note would say nothing true.
      await this.r.board
        .run((e) =>
          e.userNote(taskId, `${taskId}'s record ${shortSha(rec.sha)} (recorded by ${rec.by}) has not reached the remote: this claim waits up to ${Math.round(this.waitMs / 1000)} s for its host to push it, then starts from the last record that reached the remote.`, HOST_ACTOR),
        )
        .catch(() => undefined);
      if (await this.pushedWithin(taskId, rec.sha)) {
        await remote.fetchTask(taskId);
        if (await this.has(rec)) return;
        continue;
      }
      const t = this.r.board.state.tasks.get(taskId);
      if (t?.record?.sha !== rec.sha) continue; // a newer record came meanwhile: start from that one
      const to = t.pushed ?? (await this.baseRecord());
      if (!(await this.has(to)))
        throw new WorktreeError(
          'git',
          `${taskId}'s record ${shortSha(rec.sha)} never reached the remote ${remote.remote.url}, and its last pushed record ${shortSha(to.sha)} is not in ${this.r.repo.root} either${why ? ` (${why})` : ''}: nothing was changed.`,
        );
      const lost = await this.lostSince(taskId, rec);
      const done = await this.r.board.run((e) => e.rewindRecord(taskId, rec.sha, to, lost, HOST_ACTOR, token));
      if (done.ok) return;
      if (this.r.board.state.tasks.get(taskId)?.claim?.token !== token) throw ended(taskId, token);
    }
    throw new WorktreeError('git', `${taskId}'s record kept moving while this host fetched it: nothing was changed; try again.`);
  }

  /** The commit is here, with the tree the board recorded for it (what approval checks too). */
  private async has(rec: BranchRecord): Promise<boolean> {
    const tree = await this.r.treeOf(rec.sha);
    if (!tree) return false;
    if (tree !== rec.tree) throw new WorktreeError('git', `${shortSha(rec.sha)} has the tree ${shortSha(tree)} here, not the ${shortSha(rec.tree)} the board recorded: nothing was changed.`);
    return true;
  }

  /** Whether the board says `sha` reached the remote before the wait ends (false too if the record moved). */
  private pushedWithin(taskId: string, sha: string): Promise<boolean> {
    const now = () => {
      const t = this.r.board.state.tasks.get(taskId);
      return t?.pushed?.sha === sha ? true : t?.record?.sha !== sha ? false : null;
    };
    const at = now();
    if (at !== null) return Promise.resolve(at);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        this.timers.clearTimeout(timer);
        sub.dispose();
        resolve(v);
      };
      const timer = this.timers.setTimeout(() => done(false), this.waitMs);
      const sub = this.r.board.onEvent((e) => {
        if ((e.kind === 'branch-pushed' || e.kind === 'branch-recorded' || e.kind === 'record-rewound') && e.taskId === taskId) {
          const v = now();
          if (v !== null) done(v);
        }
      });
    });
  }

  /** No record of the task ever reached the remote: its claim starts at the base's head, as a first claim does. */
  private async baseRecord(): Promise<BranchRecord> {
    const base = this.r.baseBranch();
    const got = (await this.baseStart(base)).head ?? (await this.r.refs([base])).get(base);
    if (!got) throw new WorktreeError('no-base', `the base branch '${base}' does not exist in ${this.r.repo.root}: nothing was changed.`);
    return { ...got, token: 0, by: HOST_ACTOR };
  }

  /**
   * Where a first claim starts on a board with a remote: the remote's base as fetched now, which holds the work
   * approved on any host (approval lands it there, never in a clone's own branch). This clone's base may be
   * behind it. A remote not answering gives what this clone last fetched of it, and why it is not fresher;
   * with no remote, or nothing fetched ever, null: the caller starts from this clone's base, and says why.
   */
  async baseStart(base: string): Promise<{ head: { sha: string; tree: string } | null; why: string | null }> {
    const remote = this.remote();
    if (!remote) return { head: null, why: null };
    try {
      const head = await remote.fetchBranch(base);
      return { head, why: head ? null : `the remote has no branch '${base}'` };
    } catch (err) {
      // Not answering: what this clone last fetched of it is still nearer than its own branch.
      return { head: await remote.tracked(base), why: firstLine((err as Error).message) };
    }
  }

  /**
   * The recorded commits after the last pushed one, from the task's history: each branch-recorded since the
   * last rewind, after the pushed sha. A history the store no longer keeps whole still names the record.
   */
  private async lostSince(taskId: string, rec: BranchRecord): Promise<LostRecord[]> {
    const pushed = this.r.board.state.tasks.get(taskId)?.pushed?.sha ?? null;
    let line: LostRecord[] = [];
    for (const e of await this.r.board.taskLog(taskId)) {
      if (e.kind === 'branch-recorded') line.push({ sha: e.record.sha, by: e.record.by, host: e.host ?? null });
      else if (e.kind === 'record-rewound') line = [];
    }
    const cut = pushed ? line.map((l) => l.sha).lastIndexOf(pushed) : -1;
    const lost = line.slice(cut + 1);
    return lost.some((l) => l.sha === rec.sha) ? lost : [...lost, { sha: rec.sha, by: rec.by, host: null }];
  }
}

/** The claim a folder was being made for ended while its record was fetched or awaited. */
function ended(taskId: string, token: number): WorktreeError {
  return new WorktreeError('git', `the claim ${token} on ${taskId} ended while its record was awaited from the remote: no folder was made for it, and the record was left as it is.`);
}
