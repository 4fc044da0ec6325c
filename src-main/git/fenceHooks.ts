import * as fs from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fenceScript } from './fenceScript.js';

/** The hooks that fence: a commit (checked early, then again at the ref update), any ref move, a push. The
 *  trailers go in at prepare-commit-msg, which `--no-verify` does not skip, or at commit-msg when the message
 *  comes from an editor. */
export const FENCED_HOOKS = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'reference-transaction', 'pre-push'] as const;

/** Hooks git runs that the repository may have its own of: in a fenced worktree they run through us. */
const OTHER_HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge',
  'pre-merge-commit', 'post-rewrite', 'push-to-checkout', 'pre-auto-gc', 'fsmonitor-watchman', 'post-index-change',
];

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function writeAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, path);
}

/**
 * The fence's files for one Thread: one shared hook program and, per task, a folder of hook wrappers plus the
 * claim the worktree was issued. A worktree's `core.hooksPath` points at its task's folder.
 */
export class FenceHooks {
  readonly script: string;

  constructor(
    private readonly root: string,
    private readonly perl: string,
    /** The repository's own hooks folder, as git would find it (may be relative to a worktree's top). */
    private readonly chainTo: string,
  ) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    this.script = join(root, 'fence.pl');
    writeAtomic(this.script, fenceScript(), 0o700);
  }

  dirOf(taskId: string): string {
    return join(this.root, taskId);
  }

  /** Make (or refresh) a task's hook folder. Returns the folder for `core.hooksPath`. */
  install(taskId: string, base: { branch: string; base: string }): string {
    const dir = this.dirOf(taskId);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const chainDir = isAbsolute(this.chainTo) ? this.chainTo : null;
    for (const hook of FENCED_HOOKS) {
      // reference-transaction runs three times per ref update; only 'prepared' can refuse. Unless the
      // repository has a hook of its own to pass the other states to, they end in the shell, not in perl.
      const skip =
        hook === 'reference-transaction' && chainDir && !fs.existsSync(join(chainDir, hook)) ? 'case "$1" in prepared) ;; *) exec cat >/dev/null ;; esac\n' : '';
      writeAtomic(join(dir, hook), `#!/bin/sh\n# Forkbench fence for ${taskId} (generated)\n${skip}exec ${shQuote(this.perl)} ${shQuote(this.script)} ${hook} ${shQuote(dir)} "$@"\n`, 0o700);
    }
    // The repository's other hooks keep running in the worktree: core.hooksPath would otherwise hide them.
    for (const hook of OTHER_HOOKS) {
      const target = join(dir, hook);
      const theirs = chainDir ? join(chainDir, hook) : null;
      if (theirs && fs.existsSync(theirs)) writeAtomic(target, `#!/bin/sh\nexec ${shQuote(theirs)} "$@"\n`, 0o700);
      else if (!chainDir && this.chainTo) writeAtomic(target, `#!/bin/sh\nh=${shQuote(this.chainTo)}/${hook}\n[ -x "$h" ] || exit 0\nexec "$h" "$@"\n`, 0o700);
      else fs.rmSync(target, { force: true });
    }
    writeAtomic(join(dir, 'chain'), `${this.chainTo}\n`, 0o600);
    if (!fs.existsSync(join(dir, 'claim'))) this.issue(taskId, { ...base, agentId: '', token: 0 });
    return dir;
  }

  /** Record who the worktree is issued to now. Written before the agent is told, so its first commit sees it. */
  issue(taskId: string, c: { branch: string; base: string; agentId: string; token: number }): void {
    writeAtomic(
      join(this.dirOf(taskId), 'claim'),
      `task=${taskId}\nbranch=${c.branch}\nbase=${c.base}\nagent=${c.agentId}\ntoken=${c.token || ''}\n`,
      0o600,
    );
  }

  forget(taskId: string): void {
    fs.rmSync(this.dirOf(taskId), { recursive: true, force: true });
  }
}
