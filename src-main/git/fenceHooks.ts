import * as fs from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { RejectionCode } from '../../src-shared/board/result.js';
import { BRANCH_PREFIX } from '../../src-shared/git/taskBranch.js';
import { shellQuote } from '../../src-shared/text/shellQuote.js';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { fenceScript, reportScript } from './fenceScript.js';

/** The hooks that fence: a commit (checked early when the folder is fenced, and always at the ref update, which
 *  `--no-verify` does not skip), any ref move, a push. Nothing writes into the commit message: the task and
 *  token of a recorded commit are a git note the host writes after the board records it (commitNotes.ts). */
export const FENCED_HOOKS = ['pre-commit', 'reference-transaction', 'pre-push'] as const;

/** Hooks git runs that the repository may have its own of: in a fenced folder they run through us. */
const OTHER_HOOKS = [
  'prepare-commit-msg', 'commit-msg', 'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge',
  'pre-merge-commit', 'post-rewrite', 'push-to-checkout', 'pre-auto-gc', 'fsmonitor-watchman', 'post-index-change',
];

/** Inside a task folder's hook folder: its copy of the repository's own hooks, made at its grant. */
const REPO_COPY = 'repository';

/** The hook folder of the Thread's own folder (the main worktree), beside the per-grant ones. */
export const THREAD_HOOKS = 'thread';

// Not durable (no fsync): a claim writes a couple of dozen of these files, each written again whenever the
// folder's claim changes, and an fsync costs ~2 ms apiece on this machine.
const writeAtomic = (path: string, text: string, mode: number): void => writeFileAtomic(path, text, { mode });

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
  readonly report: string;

  constructor(
    private readonly root: string,
    private readonly perl: string,
    /** The repository's own hooks folder, as git would find it (may be relative to a worktree's top): the
     *  Thread's folder chains to it, each task folder to its own copy of it made at its grant. */
    private readonly chainTo: string,
    /** The board's socket, for hooks run without an agent's environment (a person, or an agent that dropped it). */
    private readonly socket: string,
  ) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    this.script = join(root, 'fence.pl');
    writeAtomic(this.script, fenceScript(), 0o700);
    this.report = join(root, 'report.pl');
    writeAtomic(this.report, reportScript(), 0o700);
  }

  dirOf(key: string): string {
    return join(this.root, key);
  }

  /**
   * Make (or refresh) a folder's hook wrappers. Returns the folder for `core.hooksPath`.
   *
   * Each hook git finds is a process, and on this kind of machine a process costs 5-10 ms, so the common
   * case (the holder committing in its own live folder) is answered by the shell wrappers themselves from
   * small state files the host keeps beside the claim (`agent`, `record`, `fenced`, `frozen`), and only the
   * report of a landed move, which needs the board, starts perl. A task folder has no pre-commit of its own
   * (the ref update is where the fence answers) unless the repository has one or the folder is fenced, and no
   * message hook unless the repository has one: a commit runs two hook processes, the ref update's check
   * before the move lands and its report after.
   */
  install(key: string, task?: { task: string; branch: string; base: string }): string {
    const dir = this.dirOf(key);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A task folder runs its own copy of the repository's hooks, made at its grant (the first install):
    // `.git/hooks` is shared by every worktree and every agent can write it, so a live chain would run
    // what one agent planted there in every other agent's commits, with that agent's secret.
    const chainDir = !isAbsolute(this.chainTo) ? null : task ? join(dir, REPO_COPY) : this.chainTo;
    if (task && chainDir && !fs.existsSync(chainDir)) copyHooks(this.chainTo, chainDir);
    const chainTo = chainDir ?? this.chainTo;
    const theirs = (hook: string): string | null => (chainDir && isExecutableFile(join(chainDir, hook)) ? join(chainDir, hook) : null);
    const perlCall = (hook: string) => `exec ${shellQuote(this.perl)} ${shellQuote(this.script)} ${hook} ${shellQuote(dir)} "$@"`;
    for (const hook of FENCED_HOOKS) {
      const target = join(dir, hook);
      let body: string;
      if (!task) {
        // The Thread's own folder: only a commit, a branch move or a push asks.
        const skip = hook === 'reference-transaction' && chainDir && !theirs(hook) ? 'case "$1" in prepared) ;; *) exec cat >/dev/null ;; esac\n' : '';
        body = `${skip}${perlCall(hook)}\n`;
      } else if (hook === 'pre-commit') {
        if (!theirs(hook) && !fs.existsSync(join(dir, 'fenced'))) {
          fs.rmSync(target, { force: true });
          continue;
        }
        body = `${FAST}if fast; then ${chainExec(theirs(hook))}; fi\n${perlCall(hook)}\n`;
      } else if (hook === 'reference-transaction') {
        body = refTransaction(dir, task, theirs(hook), perlCall(hook), `exec ${shellQuote(this.perl)} ${shellQuote(this.report)} ${shellQuote(dir)}`);
      } else body = `${perlCall(hook)}\n`;
      writeAtomic(target, `#!/bin/sh\n# Forkbench fence (generated)\nd=${shellQuote(dir)}\n${body}`, 0o700);
    }
    // The repository's other hooks keep running: core.hooksPath would otherwise hide them.
    for (const hook of OTHER_HOOKS) {
      const target = join(dir, hook);
      const mine = theirs(hook);
      if (mine) writeAtomic(target, `#!/bin/sh\nexec ${shellQuote(mine)} "$@"\n`, 0o700);
      else if (!chainDir && chainTo) writeAtomic(target, `#!/bin/sh\nh=${shellQuote(chainTo)}/${hook}\n[ -x "$h" ] || exit 0\nexec "$h" "$@"\n`, 0o700);
      else fs.rmSync(target, { force: true });
    }
    writeAtomic(join(dir, 'chain'), `${chainTo}\n`, 0o600);
    return dir;
  }

  /** The repository's hooks a task folder runs: those copied for it at its grant (none when the repository's
   *  hooks folder is relative, husky's `.husky/_`: each worktree's own files, run live). */
  repoHooksOf(key: string): string[] {
    try {
      return fs.readdirSync(join(this.dirOf(key), REPO_COPY)).filter((f) => isExecutableFile(join(this.dirOf(key), REPO_COPY, f))).sort();
    } catch {
      return [];
    }
  }

  /** The Thread's own folder: agents commit and move branches in their worktrees, never here. */
  installThread(folder: string): string {
    const dir = this.install(THREAD_HOOKS);
    writeAtomic(join(dir, 'claim'), `mode=thread\nfolder=${oneLine(folder)}\nsocket=${oneLine(this.socket)}\n`, 0o600);
    return dir;
  }

  /** Bind the grant's folder to its claim (who holds it, under which token). Written before the agent is told, so its first commit sees it. */
  bind(key: string, c: FolderClaim, record: string): void {
    const dir = this.dirOf(key);
    writeAtomic(join(dir, 'claim'), claimText(c, this.socket), 0o600);
    writeAtomic(join(dir, 'record'), `${record}\n`, 0o600);
    writeAtomic(join(dir, 'agent'), `${c.agentId}\n`, 0o600);
    // A folder bound before there were notes kept its token for the message hook: gone with that hook.
    fs.rmSync(join(dir, 'token'), { force: true });
  }

  /** The board recorded a move: the folder's next move must start there. */
  setRecord(key: string, sha: string): void {
    if (fs.existsSync(this.dirOf(key))) overwriteRecord(join(this.dirOf(key), 'record'), `${sha}\n`);
  }

  /** In review (frozen) or back to work: a frozen folder's moves go to the board, which refuses them. */
  freeze(key: string, frozen: boolean): void {
    const f = join(this.dirOf(key), 'frozen');
    if (frozen && fs.existsSync(this.dirOf(key))) writeAtomic(f, '\n', 0o600);
    else fs.rmSync(f, { force: true });
  }

  /** The grant's claim ended: from now on the folder's hooks refuse everything, in the board's words. */
  fence(key: string, c: FolderClaim, code: RejectionCode, message: string): void {
    const dir = this.dirOf(key);
    if (!fs.existsSync(dir)) return;
    writeAtomic(join(dir, 'claim'), `${claimText(c, this.socket)}fenced=${oneLine(message)}\ncode=${code}\n`, 0o600);
    writeAtomic(join(dir, 'fenced'), '\n', 0o600);
    // A fenced folder refuses a commit before its editor opens, too.
    if (fs.existsSync(join(dir, 'reference-transaction'))) this.install(key, { task: c.task, branch: c.branch, base: c.base });
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

function isExecutableFile(path: string): boolean {
  try {
    const st = fs.statSync(path);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The repository's hooks folder as it is now, into `to`: its files (a hook may source a file beside it, as
 * husky 4's did), not git's `.sample`s, a link copied as what it points to. A folder that cannot be read
 * gives an empty copy: the claim then runs none of them, never the live folder.
 */
function copyHooks(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true, mode: 0o700 });
  let names: string[];
  try {
    names = fs.readdirSync(from);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.endsWith('.sample')) continue;
    try {
      const st = fs.statSync(join(from, name));
      if (!st.isFile()) continue;
      fs.copyFileSync(join(from, name), join(to, name));
      fs.chmodSync(join(to, name), st.mode & 0o755);
    } catch {
      // gone while being copied, or unreadable: not copied
    }
  }
}

/**
 * The record file, rewritten in place: this runs for every commit before the board answers its hook, and a
 * temp file and rename cost ~5× as much here (0.41 vs 0.08 ms). A wrapper that reads it half-written sees a
 * sha that is not the record and asks the board (perl), which decides on its own record: slower, never wrong.
 */
function overwriteRecord(path: string, text: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r+');
  } catch {
    writeAtomic(path, text, 0o600);
    return;
  }
  try {
    fs.writeSync(fd, text, 0);
    fs.ftruncateSync(fd, Buffer.byteLength(text));
  } finally {
    fs.closeSync(fd);
  }
}

/** The holder, in its own live folder: nothing for perl to do. Builtins only (no process). */
const FAST =
  'fast() { [ ! -e "$d/fenced" ] && [ -n "${FORKBENCH_SECRET:-}" ] && [ -n "${FORKBENCH_AGENT_ID:-}" ] && read -r a < "$d/agent" && [ "$a" = "$FORKBENCH_AGENT_ID" ]; }\n';

/** Run the repository's own hook in our place, or end here. */
const chainExec = (theirs: string | null) => (theirs ? `exec ${shellQuote(theirs)} "$@"` : 'exit 0');

/**
 * reference-transaction: 'prepared' answers in the shell when the holder moves its own branch from the
 * recorded commit and touches no base or other task branch; anything else, and every 'committed' (the
 * report the board records), goes to perl. 'aborted' goes to the repository's hook or nowhere.
 */
function refTransaction(dir: string, task: { branch: string; base: string }, theirs: string | null, perlCall: string, reportCall: string): string {
  const rest = theirs ? `exec ${shellQuote(theirs)} "$@"` : 'exec cat >/dev/null';
  const pass = theirs ? `printf '%s' "$input" | ${shellQuote(theirs)} "$@"; exit $?` : 'exit 0';
  return `${FAST}case "$1" in
  prepared) ;;
  committed) ${theirs ? perlCall : reportCall} ;;
  *) ${rest} ;;
esac
if fast && [ ! -e "$d/frozen" ] && read -r rec < "$d/record"; then
  input=''
  ok=1
  while read -r old new ref; do
    input="$input$old $new $ref
"
    case "$ref" in
      ${shellQuote(`refs/heads/${task.branch}`)}) [ "$old" = "$rec" ] || ok=0 ;;
      ${shellQuote(`refs/heads/${task.base}`)}|refs/heads/${BRANCH_PREFIX}*) ok=0 ;;
    esac
  done
  [ "$ok" = 1 ] && { ${pass}; }
  printf '%s' "$input" | ${perlCall.replace(/^exec /, '')}
  exit $?
fi
${perlCall}
`;
}

function claimText(c: FolderClaim, socket: string): string {
  return `mode=task\ntask=${c.task}\nbranch=${c.branch}\nbase=${c.base}\nagent=${c.agentId}\ntoken=${c.token || ''}\nsocket=${oneLine(socket)}\n`;
}
