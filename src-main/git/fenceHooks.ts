import * as fs from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { RejectionCode } from '../../src-shared/board/result.js';
import { fenceScript } from './fenceScript.js';

/** The hooks that fence: a commit (checked early, then again at the ref update), any ref move, a push. The
 *  trailers go in at prepare-commit-msg, which `--no-verify` does not skip, or at commit-msg when the message
 *  comes from an editor. */
export const FENCED_HOOKS = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'reference-transaction', 'pre-push'] as const;

/** Hooks git runs that the repository may have its own of: in a fenced folder they run through us. */
const OTHER_HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge',
  'pre-merge-commit', 'post-rewrite', 'push-to-checkout', 'pre-auto-gc', 'fsmonitor-watchman', 'post-index-change',
];

/** The hook folder of the Thread's own folder (the main worktree), beside the per-grant ones. */
export const THREAD_HOOKS = 'thread';

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function writeAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, path);
}

/** Who a grant's folder answers to, as its claim file says. */
export interface FolderClaim {
  task: string;
  branch: string;
  base: string;
  agentId: string;
  token: number;
}

/**
 * The fence's files for one Thread: one shared hook program and, per folder (each grant's worktree, and the
 * Thread's own folder), a folder of hook wrappers plus the claim file. A worktree's `core.hooksPath` points
 * at its own folder, so fencing one grant's folder never touches another's.
 */
export class FenceHooks {
  readonly script: string;

  constructor(
    private readonly root: string,
    private readonly perl: string,
    /** The repository's own hooks folder, as git would find it (may be relative to a worktree's top). */
    private readonly chainTo: string,
    /** The board's socket, for hooks run without an agent's environment (a person, or an agent that dropped it). */
    private readonly socket: string,
  ) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    this.script = join(root, 'fence.pl');
    writeAtomic(this.script, fenceScript(), 0o700);
  }

  dirOf(key: string): string {
    return join(this.root, key);
  }

  /** Make (or refresh) a folder's hook wrappers. Returns the folder for `core.hooksPath`. */
  install(key: string): string {
    const dir = this.dirOf(key);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const chainDir = isAbsolute(this.chainTo) ? this.chainTo : null;
    for (const hook of FENCED_HOOKS) {
      // reference-transaction runs three times per ref update; 'prepared' can refuse and 'committed' reports
      // what landed. Unless the repository has a hook of its own to pass the states to, 'aborted' ends in
      // the shell, not in perl.
      const skip =
        hook === 'reference-transaction' && chainDir && !fs.existsSync(join(chainDir, hook)) ? 'case "$1" in prepared|committed) ;; *) exec cat >/dev/null ;; esac\n' : '';
      writeAtomic(join(dir, hook), `#!/bin/sh\n# Forkbench fence (generated)\n${skip}exec ${shQuote(this.perl)} ${shQuote(this.script)} ${hook} ${shQuote(dir)} "$@"\n`, 0o700);
    }
    // The repository's other hooks keep running: core.hooksPath would otherwise hide them.
    for (const hook of OTHER_HOOKS) {
      const target = join(dir, hook);
      const theirs = chainDir ? join(chainDir, hook) : null;
      if (theirs && fs.existsSync(theirs)) writeAtomic(target, `#!/bin/sh\nexec ${shQuote(theirs)} "$@"\n`, 0o700);
      else if (!chainDir && this.chainTo) writeAtomic(target, `#!/bin/sh\nh=${shQuote(this.chainTo)}/${hook}\n[ -x "$h" ] || exit 0\nexec "$h" "$@"\n`, 0o700);
      else fs.rmSync(target, { force: true });
    }
    writeAtomic(join(dir, 'chain'), `${this.chainTo}\n`, 0o600);
    return dir;
  }

  /** The Thread's own folder: agents commit and move branches in their worktrees, never here. */
  installThread(folder: string): string {
    const dir = this.install(THREAD_HOOKS);
    writeAtomic(join(dir, 'claim'), `mode=thread\nfolder=${oneLine(folder)}\nsocket=${oneLine(this.socket)}\n`, 0o600);
    return dir;
  }

  /** Record who the grant's folder is issued to. Written before the agent is told, so its first commit sees it. */
  issue(key: string, c: FolderClaim): void {
    writeAtomic(join(this.dirOf(key), 'claim'), claimText(c, this.socket), 0o600);
  }

  /** The grant's claim ended: from now on the folder's hooks refuse everything, in the board's words. */
  fence(key: string, c: FolderClaim, code: RejectionCode, message: string): void {
    if (!fs.existsSync(this.dirOf(key))) return;
    writeAtomic(join(this.dirOf(key), 'claim'), `${claimText(c, this.socket)}fenced=${oneLine(message)}\ncode=${code}\n`, 0o600);
  }

  /** The claim file as written, for the host's own checks (which agent a folder belongs to). */
  read(key: string): Record<string, string> {
    const out: Record<string, string> = {};
    try {
      for (const line of fs.readFileSync(join(this.dirOf(key), 'claim'), 'utf8').split('\n')) {
        const m = /^(\w+)=(.*)$/.exec(line);
        if (m) out[m[1] as string] = m[2] as string;
      }
    } catch {
      // no claim file: a folder never issued
    }
    return out;
  }

  forget(key: string): void {
    fs.rmSync(this.dirOf(key), { recursive: true, force: true });
  }
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

function claimText(c: FolderClaim, socket: string): string {
  return `mode=task\ntask=${c.task}\nbranch=${c.branch}\nbase=${c.base}\nagent=${c.agentId}\ntoken=${c.token || ''}\nsocket=${oneLine(socket)}\n`;
}
