import * as fs from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import type { GitRemote } from '../../src-shared/board/model.js';
import { ALLOWED_PROTOCOLS, configSettings, GitError, personScope, type GitResult } from './git.js';
import type { TaskRepo } from './taskRepo.js';

export const RemoteConstants = {
  /** A fetch or push of a task's few commits takes well under a second on a LAN and a few seconds on a slow
   *  link; a remote silent for 60 s is taken as unreachable, and the caller says so rather than wait on. */
  networkTimeoutMs: 60_000,
  /** Fetches asked again because a grant's folder was being made while they ran: each retry waits for the
   *  folders being made then, so only grants that keep starting meanwhile can use up more than one. */
  addRaceTries: 3,
} as const;

/** How one ref of a push ended, from `git push --porcelain`. */
export type PushOutcome =
  | { dst: string; ok: true; forced: boolean; upToDate: boolean }
  /** `stale`: a compare-and-swap lost (the ref was not at the expected sha); `rejected`: the remote refused
   *  it (a protected branch, no permission, a hook); `unreachable`: the push never got an answer. */
  | { dst: string; ok: false; why: 'stale' | 'rejected' | 'unreachable'; message: string };

/** One ref to push: `src` (a sha or local ref) to `dst` on the remote, only if `dst` is at `expect` there
 *  (null: only if `dst` does not exist; undefined: whatever it is). */
export interface RefUpdate {
  src: string;
  dst: string;
  expect?: string | null;
}

/** Where this clone keeps its view of a remote's branch, as `git fetch <remote>` does. */
export const trackingRef = (remote: string, branch: string) => `refs/remotes/${remote}/${branch}`;

/** What a person reads of git's failure in a note: its first line that says something, 300 characters at most. */
export function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim()) ?? s).slice(0, 300);
}

/** The URL as the board keeps and compares it: without the password an https URL may carry. */
export function publicUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_m, scheme: string, userinfo: string) => {
    const user = userinfo.split(':')[0] ?? '';
    return user && !userinfo.includes(':') ? `${scheme}${user}@` : scheme;
  });
}

/**
 * The Thread's remote as the host talks to it: fetches and pushes under a time bound, to the URL the clone
 * has for the board's remote now (which carries the person's credentials), and only while that URL is the one
 * the board names: an agent can edit `.git/config`, and a remote it re-pointed is refused, not pushed to.
 */
export class TaskRemote {
  constructor(
    private readonly r: TaskRepo,
    readonly remote: GitRemote,
  ) {}

  /** The clone's remote called `name`, as the board would name it, or null when the clone has none. */
  static async read(r: TaskRepo, name: string): Promise<GitRemote | null> {
    const got = await r.git(r.repo.root, ['remote', 'get-url', '--', name], { allowFail: true });
    const url = got.stdout.trim();
    return got.code === 0 && url ? { name, url: publicUrl(url) } : null;
  }

  /** The URL to talk to: the clone's own for the remote, checked against the board's. */
  private async url(): Promise<string> {
    const got = await this.r.git(this.r.repo.root, ['remote', 'get-url', '--', this.remote.name], { allowFail: true });
    const url = got.stdout.trim();
    if (got.code !== 0 || !url) throw new GitError(['remote', 'get-url', this.remote.name], got.code, '', `this clone has no remote '${this.remote.name}' any more`);
    if (publicUrl(url) !== this.remote.url)
      throw new GitError(['remote', 'get-url', this.remote.name], got.code, '', `this clone's remote '${this.remote.name}' is ${publicUrl(url)}, not the board's ${this.remote.url}: nothing was sent`);
    return url;
  }

  /** `git <args> -- <url> <rest>` to the remote, as the host talks to it (remoteSettings). */
  private async run(args: string[], url: string, rest: readonly string[], allowFail = false): Promise<GitResult> {
    try {
      const settings = await remoteSettings(this.r.repo.root, url, args[0] === 'push');
      // ssh, and what the person's ssh config has it run, start with only their stdio (inheritedFds.ts).
      return await this.r.git(this.r.repo.root, [...settings, ...args, '--', url, ...rest], { allowFail, timeoutMs: RemoteConstants.networkTimeoutMs, closeFds: true });
    } catch (err) {
      // The command line names the URL with the person's credentials and their credential helpers: the
      // failure is told without it, in git's own words with any password taken out of a URL they quote.
      if (err instanceof GitError) throw new GitError([args[0] ?? 'git'], err.code, '', remoteSaid(err.stderr.trim() || err.stdout.trim()));
      throw err;
    }
  }

  /** Fetch refs of the remote (`refs/forkbench/tasks/<board>/T-7`, `refs/heads/main`, or `src:dst` specs) into this
   *  clone's objects. FETCH_HEAD is not written: two fetches at once would fight over it. No automatic
   *  maintenance after it: a gc the fetch started would take the repository's locks while a grant's folder is
   *  being made (and costs a process on every re-grant). */
  async fetch(refspecs: readonly string[]): Promise<void> {
    for (let i = 0; ; i++) {
      const making = this.r.worktreesMade();
      try {
        await this.run(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-auto-maintenance'], await this.url(), refspecs);
        return;
      } catch (err) {
        // A grant's folder was being made while this ran (its HEAD is null until it has checked out): once
        // it is made the fetch is asked again. Not a wait before every fetch: a grant must not wait on a
        // slow remote, nor a fetch on grants, when they do not meet.
        const now = this.r.worktreesMade();
        const met = making.any || now.any || now.started !== making.started;
        if (i >= RemoteConstants.addRaceTries || !met || !/bad object worktrees\//.test((err as Error).message)) throw err;
        await now.done;
      }
    }
  }

  /**
   * The remote's branch `branch` as it is now, fetched into this clone's remote-tracking ref of it (where the
   * person's own `git fetch` puts it: the one ref of theirs this touches), one such fetch at a time. Throws
   * the fetch's failure; resolves null when the remote has no such branch.
   */
  async fetchBranch(branch: string): Promise<{ sha: string; tree: string } | null> {
    const tracking = trackingRef(this.remote.name, branch);
    return this.r.fetches.run(async () => {
      await this.fetch([`+refs/heads/${branch}:${tracking}`]);
      return this.tracked(branch);
    });
  }

  /** What this clone last fetched of the remote's `branch` (its remote-tracking ref), or null. */
  async tracked(branch: string): Promise<{ sha: string; tree: string } | null> {
    const r = await this.r.git(this.r.repo.root, ['for-each-ref', '--format=%(objectname)%00%(tree)', trackingRef(this.remote.name, branch)]);
    const [sha, tree] = r.stdout.trim().split('\0');
    return sha && tree ? { sha, tree } : null;
  }

  /** Fetch a task's recorded commit from the remote's task namespace (refs/forkbench/tasks/<board>/T-n), where the
   *  host that recorded it pushes it: the first line of why it failed, or null. */
  async fetchTask(taskId: string): Promise<string | null> {
    return this.fetch([this.r.remoteRefOf(taskId)]).then(
      () => null,
      (err: Error) => firstLine(err.message),
    );
  }

  /** The remote's refs under `patterns`, by name. */
  async list(patterns: readonly string[]): Promise<Map<string, string>> {
    const out = await this.run(['ls-remote'], await this.url(), patterns);
    const refs = new Map<string, string>();
    for (const line of out.stdout.split('\n')) {
      const [sha, ref] = line.split('\t');
      if (sha && ref) refs.set(ref, sha);
    }
    return refs;
  }

  /**
   * Push each update as a compare-and-swap where it names what it expects, all in one push (one connection;
   * git applies each ref on its own). The remote's own hooks run; the person's pre-push hooks do not when
   * `verify` is false (the host's background copies of task branches are not the person's pushes).
   */
  async push(updates: readonly RefUpdate[], o: { verify?: boolean } = {}): Promise<PushOutcome[]> {
    const leases = updates.filter((u) => u.expect !== undefined).map((u) => `--force-with-lease=${u.dst}:${u.expect ?? ''}`);
    const specs = updates.map((u) => `${u.expect === undefined ? '+' : ''}${u.src}:${u.dst}`);
    let res: GitResult;
    try {
      res = await this.run(['push', '--porcelain', ...(o.verify === false ? ['--no-verify'] : []), ...leases], await this.url(), specs, true);
    } catch (err) {
      // Not an outage: the repository's config is what stops it, and the caller says so in those words.
      if (err instanceof RemoteSettingError) throw err;
      const message = (err as Error).message;
      return updates.map((u) => ({ dst: u.dst, ok: false, why: 'unreachable', message }));
    }
    const outcomes = updates.map((u) => outcomeOf(u.dst, res));
    return this.staleOnServer(updates, outcomes);
  }

  /**
   * A compare-and-swap can also be lost on the remote itself: the ref moved after git advertised it (another
   * push landed while this one's hooks ran), and receive-pack's own check refuses it as "[remote rejected]
   * (failed to update ref)", words it also uses for other failures. A refused ref whose lease no longer holds
   * on the remote now is stale, not refused; one still at its expected sha was refused for what it is.
   */
  private async staleOnServer(updates: readonly RefUpdate[], outcomes: PushOutcome[]): Promise<PushOutcome[]> {
    const leased = updates.filter((u, i) => u.expect !== undefined && outcomes[i]?.ok === false && (outcomes[i] as { why: string }).why === 'rejected');
    if (!leased.length) return outcomes;
    const now = await this.list(leased.map((u) => u.dst)).catch(() => null);
    if (!now) return outcomes;
    return outcomes.map((o, i) => {
      const u = updates[i] as RefUpdate;
      if (o.ok || o.why !== 'rejected' || !leased.includes(u)) return o;
      const at = now.get(u.dst) ?? null;
      return at === (u.expect ?? null) ? o : { ...o, why: 'stale', message: `${u.dst} moved on the remote while this push was being taken (${o.message})` };
    });
  }
}

/** A setting of the repository's that the host will not follow to the remote: nothing was sent. */
export class RemoteSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteSettingError';
  }
}

/**
 * What a command that talks to the remote is told beyond every host git's settings (git.ts's HOST_ONLY), from
 * one read of the config:
 * - each transport the repository's config allows by name (`protocol.ext.allow=always`, which beats
 *   `protocol.allow`) is put back to `never` unless it is one the host means (file, ssh, https);
 * - a rewrite of the remote's URL in the repository's config (`url.<x>.insteadOf`, `url.<x>.pushInsteadOf`:
 *   many-valued, so no `-c` can take one back), or a setting that sends the talk elsewhere or drops its TLS
 *   check (`http.proxy`, `http.sslVerify`, `http.sslCAInfo`, ...), stops the command before it starts:
 *   the host never follows one, and says which;
 * - the person's own credential helpers (system and global config; the host's git empties the rest) named
 *   again, each only as a plain helper name with plain arguments: `git credential-<name>`, never a shell
 *   line (`!…`) or a program path another process could have written.
 */
export async function remoteSettings(root: string, url: string, push: boolean): Promise<string[]> {
  const all = await configSettings(root, '^(url|protocol|http|credential)\\.');
  const out: string[] = [];
  for (const s of all) {
    if (personScope(s)) {
      if (s.key === 'credential.helper' && plainHelper(s.value)) out.push('-c', `credential.helper=${s.value}`);
      continue;
    }
    const transport = /^protocol\.(.+)\.allow$/.exec(s.key)?.[1];
    if (transport && !(ALLOWED_PROTOCOLS as readonly string[]).includes(transport)) out.push('-c', `protocol.${transport}.allow=never`);
    const rewrite = /^url\.(.+)\.(insteadof|pushinsteadof)$/.exec(s.key);
    // git rewrites a push by pushInsteadOf (else insteadOf), anything else by insteadOf alone.
    if (rewrite && (push || rewrite[2] === 'insteadof') && url.startsWith(s.value))
      throw new RemoteSettingError(`the repository's config rewrites the remote's URL (url.${rewrite[1]}.${rewrite[2] === 'insteadof' ? 'insteadOf' : 'pushInsteadOf'} = ${s.value}), and the host never follows a rewrite: nothing was sent. Remove it (git config --unset-all url.${rewrite[1]}.${rewrite[2]}) if it is yours`);
    if (/^http\.(.+\.)?(proxy|sslverify|sslcainfo|sslcapath|curloptresolve)$/.test(s.key))
      throw new RemoteSettingError(`the repository's config sets ${s.key} = ${s.value}, which changes where or how safely the host talks to the remote, and the host never follows it: nothing was sent. Remove it (git config --unset-all ${s.key}) if it is yours`);
  }
  return out;
}

/** A credential helper git runs as `git credential-<name> <args>` (store, cache, osxkeychain, manager,
 *  libsecret, with options such as `--file ~/.git-credentials`), or a program by its absolute path that this
 *  process cannot write, nor its folder (libsecret's under /usr/share): no shell line, nothing a shell reads. */
function plainHelper(value: string): boolean {
  if (PLAIN_HELPER.test(value)) return true;
  const space = value.indexOf(' ');
  const program = space < 0 ? value : value.slice(0, space);
  const args = space < 0 ? '' : value.slice(space);
  return isAbsolute(program) && HELPER_ARGS.test(args) && !writable(program) && !writable(dirname(program));
}

function writable(path: string): boolean {
  try {
    fs.accessSync(path, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Options and plain words only: `--file ~/.git-credentials`, `--timeout=3600`. */
const HELPER_ARGS = /^( +--?[A-Za-z0-9][A-Za-z0-9-]*(=[A-Za-z0-9_.\/~:@+-]+)?( +[A-Za-z0-9_.\/~:@+-]+)?)*$/;
const PLAIN_HELPER = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]*${HELPER_ARGS.source.slice(1)}`);

/** Text git wrote about the remote, fit to be shown and kept (a note on the board): every URL in it as the
 *  board would name it, without a password. */
export function remoteSaid(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, (url) => publicUrl(url));
}

/** A ref's line in `git push --porcelain`: `<flag>\t<src>:<dst>\t<summary>`. */
function outcomeOf(dst: string, res: GitResult): PushOutcome {
  const line = res.stdout.split('\n').find((l) => l.split('\t')[1]?.endsWith(`:${dst}`));
  if (!line) {
    const said = remoteSaid(res.stderr.trim() || res.stdout.trim() || `git push exited ${res.code}`);
    return { dst, ok: false, why: res.code === 0 ? 'rejected' : 'unreachable', message: said };
  }
  const [flag = '', , summary = ''] = line.split('\t');
  if (flag === '!') {
    const stale = /stale info|fetch first|non-fast-forward/.test(summary);
    const detail = res.stderr.split('\n').filter((l) => /^remote:|error:|hint:/.test(l)).slice(0, 6).join('\n');
    return { dst, ok: false, why: stale ? 'stale' : 'rejected', message: remoteSaid(detail ? `${summary}\n${detail}` : summary) };
  }
  return { dst, ok: true, forced: flag === '+', upToDate: flag === '=' };
}
