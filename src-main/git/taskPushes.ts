import { Limits } from '../../src-shared/board/limits.js';
import { HOST_ACTOR } from '../../src-shared/board/model.js';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { realTimers, type Timers } from '../base/timers.js';
import { firstLine, type TaskRemote } from './taskRemote.js';
import type { TaskRepo } from './taskRepo.js';

export const PushConstants = {
  /** The first retry after the remote did not answer: a moment's network blip is over in about a second. */
  firstRetryMs: 1_000,
  /** Retries double up to this: a remote down for an hour is asked once a minute, not hammered. */
  maxRetryMs: 60_000,
  /** Compare-and-swaps lost in a row before the push waits for the next retry: each loss means something
   *  wrote the task's ref on the remote between two of ours, which a healthy namespace never sees twice. */
  staleTries: 3,
} as const;

interface TaskPush {
  /** A push of this task runs now; `again`: a record came meanwhile, push once more after it. */
  running: boolean;
  again: boolean;
  retry: unknown;
  delayMs: number;
  /** Said once per outage on the task's history, not per retry: "not on the remote yet", a refusal. */
  toldUnreachable: boolean;
  toldRejected: boolean;
  toldFailed: boolean;
}

/**
 * The commits this host recorded, copied to the Thread's remote under Forkbench's namespace
 * (refs/forkbench/tasks/<board>/T-n), in the background, one push at a time per task and always the task's newest
 * record (a later record supersedes one still waiting). Once a push lands, the board records that the sha is
 * on the remote (branch-pushed): another host's claim can start there.
 *
 * The namespace is Forkbench's and the board's record is the truth: a value there that is not what this host
 * last pushed is kept aside on the remote (refs/forkbench/stray/<board>/T-n/<sha>) and overwritten, never trusted.
 */
export class TaskPushes {
  private readonly tasks = new Map<string, TaskPush>();
  /** Each task's latest record made on this host: only those are this host's to push. */
  private readonly mine = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly r: TaskRepo,
    /** The Thread's remote as the board names it now, or null (no remote: nothing is pushed). */
    private readonly remote: () => TaskRemote | null,
    private readonly timers: Timers = realTimers,
  ) {}

  /** The board recorded `sha` for the task, on this host. */
  recorded(taskId: string, sha: string): void {
    if (this.closed || !this.remote()) return;
    this.mine.set(taskId, sha);
    const p = this.stateOf(taskId);
    // A newer record supersedes a retry that waits: pushed now, the back-off started again.
    if (p.retry !== undefined) {
      this.timers.clearTimeout(p.retry);
      p.retry = undefined;
      p.delayMs = PushConstants.firstRetryMs;
    }
    this.kick(taskId);
  }

  /**
   * After a restart: each task whose record is a commit of this clone but not yet on the remote is pushed,
   * as the host that recorded it would have (it may be this one, killed mid-push). A record of another host
   * that this clone happens to have is the same commit: pushing it too is harmless (a compare-and-swap).
   */
  async resume(): Promise<void> {
    if (!this.remote()) return;
    for (const t of this.r.board.state.tasks.values()) {
      const rec = t.record;
      if (!rec || t.state === 'done' || t.pushed?.sha === rec.sha) continue;
      if ((await this.r.treeOf(rec.sha)) === rec.tree) this.recorded(t.id, rec.sha);
    }
  }

  private stateOf(taskId: string): TaskPush {
    let p = this.tasks.get(taskId);
    if (!p) this.tasks.set(taskId, (p = { running: false, again: false, retry: undefined, delayMs: PushConstants.firstRetryMs, toldUnreachable: false, toldRejected: false, toldFailed: false }));
    return p;
  }

  private kick(taskId: string): void {
    const p = this.stateOf(taskId);
    if (p.running) {
      p.again = true;
      return;
    }
    p.running = true;
    const run = (async () => {
      do {
        p.again = false;
        const outcome = await this.pushOnce(taskId, p).catch(async (err: Error) => {
          // git itself failed here (a broken ref in the clone, a full disk): said once, like an outage, and
          // tried again with the back-off, never dropped in silence (the two-host chaos run's lost T-7).
          if (!p.toldFailed && !this.closed) {
            p.toldFailed = true;
            await this.note(taskId, `The push of ${taskId}'s record to the remote failed on this host (${firstLine(err.message)}): it is not on the remote yet, and this host keeps trying.`);
          }
          return 'retry' as const;
        });
        if (outcome === 'retry' && !this.closed && !p.again) {
          const wait = p.delayMs;
          p.delayMs = Math.min(PushConstants.maxRetryMs, p.delayMs * 2);
          p.retry = this.timers.setTimeout(() => {
            p.retry = undefined;
            this.kick(taskId);
          }, wait);
        }
      } while (p.again && !this.closed);
      p.running = false;
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** One try at the task's newest record: done (pushed, or nothing of ours to push), retry, or stop. */
  private async pushOnce(taskId: string, p: TaskPush): Promise<'done' | 'retry' | 'stop'> {
    const t = this.r.board.state.tasks.get(taskId);
    const rec = t?.record;
    // Newest record wins, and only while it is this host's own: one recorded elsewhere since, or a record
    // rewound, is not ours to push.
    if (!t || !rec || rec.sha !== this.mine.get(taskId) || t.pushed?.sha === rec.sha) return 'done';
    const remote = this.remote();
    if (!remote) return 'done';
    const dst = this.r.remoteRefOf(taskId);
    let expect: string | null = t.pushed?.sha ?? null;
    for (let i = 0; i < PushConstants.staleTries; i++) {
      const [o] = await remote.push([{ src: rec.sha, dst, expect }], { verify: false });
      if (!o) return 'retry';
      if (o.ok) return this.landed(taskId, rec, p);
      if (o.why === 'unreachable') {
        if (!p.toldUnreachable && !this.closed) {
          p.toldUnreachable = true;
          await this.note(taskId, `${shortSha(rec.sha)} is recorded but not on the remote yet: ${remote.remote.url} did not answer (${firstLine(o.message)}). This host keeps trying; until it lands, a claim on another host cannot start from it.`);
        }
        return 'retry';
      }
      if (o.why === 'rejected') {
        if (!p.toldRejected && !this.closed) {
          p.toldRejected = true;
          await this.note(taskId, `The remote ${remote.remote.url} refused ${dst} (${o.message.slice(0, 600)}): ${taskId}'s commits stay on this host only, and a claim on another host starts from the last record that reached the remote. Let Forkbench write refs/forkbench/ there.`);
        }
        return 'stop';
      }
      // Stale: something else is there. A commit of the record's own line is this host's earlier push whose
      // landing the board did not hear: built on, not set aside. Anything else is not the record, which is
      // the truth: what the remote held is kept aside there.
      const there = (await remote.list([dst])).get(dst) ?? null;
      if (there === rec.sha) return this.landed(taskId, rec, p);
      if (there && !(await this.r.isAncestor(there, rec.sha))) {
        if (!(await this.r.treeOf(there))) await remote.fetch([dst]);
        const [kept] = await remote.push([{ src: there, dst: this.r.strayOf(taskId, there) }], { verify: false });
        if (!kept?.ok) return 'retry';
      }
      expect = there;
    }
    return 'retry';
  }

  /** The push landed: the board says so, if the record is still this line (the pushed sha, or a later
   *  record of this host that descends from it). */
  private async landed(taskId: string, rec: { sha: string; tree: string; token: number; by: string }, p: TaskPush): Promise<'done' | 'retry'> {
    p.toldUnreachable = false;
    p.toldRejected = false;
    p.delayMs = PushConstants.firstRetryMs;
    if (this.closed) return 'done';
    // The board must hear it: a write that did not reach it (the database away, this host rejoining) is
    // tried again with the push, which finds the sha already there and lands here once more. Left unsaid,
    // the next push would compare against an older sha (seen in the two-host chaos run, seed 519817).
    // The record can move while git answers whether the push is still its line: asked again then, since
    // the board's compare-and-swap refuses a line read before the move.
    for (let i = 0; i < PushConstants.staleTries; i++) {
      const now = this.r.board.state.tasks.get(taskId)?.record;
      if (!now) return 'done';
      if (now.sha !== rec.sha && !(await this.r.isAncestor(rec.sha, now.sha))) return 'done';
      if (this.r.board.state.tasks.get(taskId)?.record?.sha !== now.sha) continue;
      const said = await this.r.board.run((e) => e.recordPushed(taskId, rec, now.sha)).then(
        () => true,
        () => false,
      );
      if (said || this.closed) return 'done';
      // Refused for a record that moved meanwhile: asked again. Any other failure waits for the back-off.
      if (this.r.board.state.tasks.get(taskId)?.record?.sha === now.sha) break;
    }
    return this.closed ? 'done' : 'retry';
  }

  /** A note on the task's history from the host (git's words made printable, cut to a note's length). */
  private note(taskId: string, text: string): Promise<unknown> {
    return this.r.board.run((e) => e.userNote(taskId, outputAsText(text).slice(0, Limits.maxNoteChars), HOST_ACTOR)).catch(() => undefined);
  }

  /** Every push running now has finished (a retry that waits is not waited for). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  /** No more pushes start, and no retry waits. One in flight finishes (or its time bound ends it). */
  dispose(): void {
    this.closed = true;
    for (const p of this.tasks.values()) if (p.retry !== undefined) this.timers.clearTimeout(p.retry);
  }
}
