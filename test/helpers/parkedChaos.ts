import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import type { ParkedSeams } from '../../src-main/git/parkedWork.js';
import type { ThreadHost } from '../../src-main/thread/threadHost.js';
import { claimFoldersUnder } from '../../src-main/git/boardNames.js';
import { parkedRef } from '../../src-shared/git/taskBranch.js';
import { gitSync } from './gitFixture.js';

/** Every file of a folder but git's own (and those `skip` names), with its bytes: what the folder held, to
 *  compare file by file with a saved commit. */
export function filesOf(dir: string, skip: (rel: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (relative(dir, p) === '.git' || skip(relative(dir, p))) continue;
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), fs.readFileSync(p, 'latin1'));
    }
  };
  walk(dir);
  return out;
}

/** The files of a commit's tree with their bytes (a chaos folder holds a handful: one git per file is fine). */
export function filesAtSync(repo: string, rev: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const path of gitSync(repo, ['ls-tree', '-r', '-z', '--name-only', rev]).split('\0').filter(Boolean))
    out.set(path, execFileSync('git', ['cat-file', 'blob', `${rev}:${path}`], { cwd: repo, encoding: 'latin1' }));
  return out;
}

/**
 * The parked folders' clean-up judged during a chaos run (issue 47 item 5): each folder's saved work is
 * compared file by file with the folder itself, at the moment its ref is written and before the folder may
 * go (the clean-up waits on this seam); at the end, every saved ref is still there, at the commit the board
 * recorded, and the folders left on disk are counted.
 */
export class ParkedJudge {
  saved = 0;
  readonly problems: string[] = [];
  private host: ThreadHost | null = null;
  private folder = '';

  readonly seams: ParkedSeams = {
    step: (step, f) => {
      if (step !== 'ref-written' || !this.host) return;
      const t = this.host.board.state.tasks.get(f.taskId);
      const wt = [t?.worktree, ...(t?.parked ?? [])].find((w) => w?.path === f.path);
      if (!wt) return void this.problems.push(`${f.path} was saved, but ${f.taskId} names no such folder`);
      const ref = parkedRef(wt.branch, wt.token ?? 0);
      const held = filesOf(f.path);
      const saved = filesAtSync(this.folder, ref);
      this.saved++;
      for (const [path, bytes] of held) if (saved.get(path) !== bytes) this.problems.push(`${f.path}: ${path} is not in ${ref} as the folder holds it`);
      for (const path of saved.keys()) if (!held.has(path)) this.problems.push(`${ref} has ${path}, which ${f.path} does not`);
    },
  };

  attach(host: ThreadHost, folder: string): void {
    this.host = host;
    this.folder = folder;
  }

  /** Claim folders of this board on disk now. */
  foldersOnDisk(host: ThreadHost): number {
    const key = host.worktrees.require().names.key;
    return claimFoldersUnder(host.worktrees.require().names.worktreesRoot).filter((f) => f.board === key).length;
  }

  /** Every saved work the board records is under its ref, at its sha. */
  refsProblems(host: ThreadHost): void {
    for (const t of host.board.state.tasks.values())
      for (const w of t.saved ?? []) {
        const sha = gitSync(this.folder, ['for-each-ref', '--format=%(objectname)', w.ref]);
        if (sha !== w.sha) this.problems.push(`${t.id}'s saved work ${w.ref} is ${sha || 'gone'}, not ${w.sha}`);
      }
  }
}
