import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BranchRecord } from '../../src-shared/board/model.js';
import { Trailers } from '../../src-shared/git/taskBranch.js';
import type { Clock } from '../base/clock.js';
import { realTimers, type Timers } from '../base/timers.js';
import type { TaskRepo } from './taskRepo.js';

/** Where the host writes what the board recorded of each commit: `git log --notes=forkbench` shows it. */
export const NOTES_REF = 'refs/notes/forkbench';

/** Who writes the notes commits: the host, not the person (whose identity git may not even have). */
const NOTES_AUTHOR = 'Forkbench <forkbench@localhost>';

/**
 * The notes wait until the records pause this long, so an agent's burst of commits costs one git process
 * after it rather than one beside each commit: on a 2-core machine a process running beside the agent's next
 * commit slows that commit. Half a second later is soon enough for a person reading `git log`.
 */
const QUIET_MS = 500;
/** A stream of commits that never pauses still gets its notes this often. */
const MAX_WAIT_MS = 5000;

/** The note's text: the trailers' words, so a person reads what the commit messages used to carry. */
export const noteText = (taskId: string, token: number) => `${Trailers.task}: ${taskId}\n${Trailers.token}: ${token}\n`;

/**
 * The task and token of each recorded commit, for people, as git notes written by the host after the board
 * recorded the commit: the hooks on the commit's path no longer write trailers into the message, which cost a
 * process per commit. Nothing trusts these notes (the board's record is the fact); a commit the board refused
 * gets none. A record whose commit is not in this repository (another host's, on a shared board) gets none
 * here. Notes not yet written when the host is killed are lost: they are for people, and the record stays.
 */
export class CommitNotes {
  private readonly pending = new Map<string, string>();
  private timer: unknown = null;
  /** When the oldest pending note was asked for (the clock's monotonic time), for MAX_WAIT_MS. */
  private since = 0;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly r: TaskRepo,
    private readonly clock: Clock,
    private readonly warn: (message: string) => void = () => undefined,
    private readonly timers: Timers = realTimers,
  ) {}

  /** The board recorded `rec` as the task's work: note it on the commit. The host's own base records
   *  (token 0, the commit a first worktree starts at) are the base's commits, not the task's. */
  recorded(taskId: string, rec: BranchRecord): void {
    if (this.closed || rec.token <= 0 || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(rec.sha)) return;
    const now = this.clock.now();
    if (this.pending.size === 0) this.since = now;
    this.pending.set(rec.sha, noteText(taskId, rec.token));
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => void this.flush(), Math.max(0, Math.min(QUIET_MS, this.since + MAX_WAIT_MS - now)));
    // A host closing writes what is pending itself (close): the timer keeps no process alive.
    this.timers.unref?.(this.timer);
  }

  /** Write what is pending now; resolves once every note asked for so far is written (or given up). */
  flush(): Promise<void> {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0) return this.writing;
    const batch = [...this.pending];
    this.pending.clear();
    this.writing = this.writing.then(() => this.write(batch)).catch((err: Error) => this.warn(`forkbench: could not write the notes of ${batch.length} recorded commit(s): ${err.message}`));
    return this.writing;
  }

  /**
   * At the Thread's start, before any note is written: a host killed inside the notes' fast-import left the
   * ref's lock (refs/notes/forkbench.lock, seen in the two-host chaos run, B killed -9 while approving), and
   * every later write of notes failed on it. The ref is this host's alone in this clone: the lock is removed.
   * Returns the locks removed.
   */
  clearInterrupted(): string[] {
    const lock = join(this.r.repo.commonDir, `${NOTES_REF}.lock`);
    if (!fs.existsSync(lock)) return [];
    fs.rmSync(lock, { force: true });
    return [lock];
  }

  /** Write the pending notes and take no more. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  /** One fast-import for the batch: it keeps the notes tree's fan-out itself and needs no user identity. */
  private async write(batch: Array<[string, string]>): Promise<void> {
    const here = await this.presentOf(batch.map(([sha]) => sha));
    const notes = batch.filter(([sha]) => here.has(sha));
    if (notes.length === 0) return;
    const parent = this.r.readRef(NOTES_REF);
    const message = `Forkbench: the board recorded ${notes.length} commit(s)\n`;
    const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
    const stream =
      `commit ${NOTES_REF}\ncommitter ${NOTES_AUTHOR} ${Math.floor(this.clock.wall() / 1000)} +0000\n${data(message)}` +
      (parent ? `from ${parent}\n` : '') +
      notes.map(([sha, text]) => `N inline ${sha}\n${data(text)}`).join('') +
      'done\n';
    await this.r.git(this.r.repo.root, ['fast-import', '--quiet', '--done'], { input: stream });
  }

  /** Which of the commits are in this repository: a loose object (a commit just made) is found on disk; only
   *  the rest cost a git process. */
  private async presentOf(shas: string[]): Promise<Set<string>> {
    const here = new Set(shas.filter((sha) => fs.existsSync(join(this.r.repo.commonDir, 'objects', sha.slice(0, 2), sha.slice(2)))));
    const rest = shas.filter((sha) => !here.has(sha));
    if (rest.length > 0) {
      const out = await this.r.git(this.r.repo.root, ['cat-file', '--batch-check'], { input: rest.join('\n') + '\n', allowFail: true });
      for (const line of out.stdout.split('\n')) {
        const m = /^([0-9a-f]{40,64}) commit /.exec(line);
        if (m) here.add(m[1] as string);
      }
    }
    return here;
  }
}
