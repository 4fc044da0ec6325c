import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { git } from './git.js';

/** What git says about a Thread's folder, once, when the Thread opens. */
export type RepoProbe =
  | {
      ok: true;
      /** The main worktree's root (the folder itself, or a repository above it). */
      root: string;
      /** The folder relative to the root (`packages/api/`), so an agent lands in the same place in its worktree. */
      prefix: string;
      /** The folder's own git dir (its HEAD) and the repository's shared one (refs, objects, hooks). */
      gitDir: string;
      commonDir: string;
    }
  | { ok: false; reason: string };

/** `git merge-tree --write-tree` (a merge computed without touching any checkout) arrived in git 2.38. */
const MIN_GIT: readonly [number, number] = [2, 38];

export async function probeRepo(folder: string): Promise<RepoProbe> {
  const version = /(\d+)\.(\d+)/.exec((await git(folder, ['version'], { allowFail: true })).stdout);
  if (version && (Number(version[1]) < MIN_GIT[0] || (Number(version[1]) === MIN_GIT[0] && Number(version[2]) < MIN_GIT[1])))
    return { ok: false, reason: `git ${version[1]}.${version[2]} is too old for worktrees under claims: ${MIN_GIT.join('.')} or newer merges without touching your checkout.` };
  const r = await git(folder, ['rev-parse', '--is-bare-repository', '--show-toplevel', '--absolute-git-dir', '--git-common-dir', '--show-prefix'], {
    allowFail: true,
  }).catch((err: Error) => ({ code: 1, stdout: '', stderr: err.message }));
  if (r.code !== 0) {
    if (/not a git repository/i.test(r.stderr))
      return { ok: false, reason: `${folder} is not a git repository, so agents share its files and nothing fences their edits. Run \`git init\` and commit there to give each claim a worktree of its own.` };
    return { ok: false, reason: `git cannot read ${folder}: ${r.stderr.trim()}` };
  }
  const [bare, root, gitDir, common, prefix = ''] = r.stdout.split('\n');
  if (bare === 'true') return { ok: false, reason: `${folder} is a bare repository: open a checkout of it instead.` };
  const commonDir = isAbsolute(common as string) ? (common as string) : resolve(folder, common as string);
  const head = await git(folder, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowFail: true });
  if (head.code !== 0) return { ok: false, reason: `${root} has no commits yet: make a first commit, then reopen the Thread to give each claim a worktree.` };
  return { ok: true, root: root as string, prefix: prefix.trim(), gitDir: gitDir as string, commonDir };
}

/**
 * The branch the folder has checked out, read from its HEAD file (no process: this runs on every grant).
 * Null when HEAD is detached.
 */
export function currentBranch(gitDir: string): string | null {
  const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
  const m = /^ref: refs\/heads\/(.+)$/.exec(head);
  return m ? (m[1] as string) : null;
}

/** The worktree's admin folder inside the repository (`.git/worktrees/T-3`), from its `.git` file. */
export function worktreeGitDir(worktree: string): string | null {
  const dotGit = join(worktree, '.git');
  if (!existsSync(dotGit)) return null;
  const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
  return m ? resolve(worktree, (m[1] as string).trim()) : null;
}
