import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { USER } from '../../src-shared/board/model.js';
import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import { type ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { BoardService } from '../board/boardService.js';
import { AgentRegistry, type AgentRecord } from '../agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../agents/agentSocket.js';
import type { AgentCallHooks } from '../agents/agentRpc.js';
import { judgeLiveness } from '../agents/liveness.js';
import { buildLaunch, writeProfileFiles, type AgentKind as ProfileId } from '../agents/profiles.js';
import { runtimeDir } from '../agents/runtimeDir.js';
import { failureNote, runVerify } from '../agents/verifyRunner.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { readTreeCpu, type TreeCpu } from '../pty/procReader.js';
import { PtySession } from '../pty/ptySession.js';
import type { GitIsolation } from '../../src-shared/protocol/windowApi.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { WorktreeError, WorktreeManager } from '../git/worktreeManager.js';
import { CLI_SCRIPT, ensureCliShim } from './cliShim.js';
import { findOnPath } from '../base/pathLookup.js';
import { paneOfProcess } from '../agents/peerCredentials.js';

export interface ThreadHostOptions {
  /** The project folder the agents work in. */
  folder: string;
  /** Where boards live (the user's data folder); the Thread's board is a subfolder of it. */
  dataRoot: string;
  /** Parent of the per-user runtime folder for sockets; defaults to $XDG_RUNTIME_DIR or the temp dir. */
  runtimeRoot?: string;
  goal?: string;
  /** Run the liveness check on its own timer (off in tests that drive it by hand). */
  liveness?: boolean;
  /** Verify commands get this long (ms). */
  verifyTimeoutMs?: number;
  /** How long a pane must be quiet before the host types an assignment message into it. */
  notifyQuietMs?: number;
  warn?: (message: string) => void;
  /** The environment agents start from; defaults to this process's. */
  env?: Record<string, string | undefined>;
}

interface Pane {
  record: AgentRecord;
  session: PtySession;
  launch: { profile: ProfileId; command?: string; cols: number; rows: number; name: string };
  cpu: { lastCpuMs: number; lastChangeAt: number };
  lastInputAt: number;
  pendingMessages: string[];
  /** The poll that types queued messages once the pane is quiet; owned by the host's store. */
  notifyTimer: TimerHandle | null;
  startedAt: number;
}

/** Stable short key for a folder, so the same folder always opens the same board. */
export function threadKeyOf(folder: string): string {
  return createHash('sha256').update(resolve(folder)).digest('hex').slice(0, 16);
}

/**
 * One open Thread: its board, the agents' socket, the agents' panes, the liveness check and the verify
 * runner. Electron and `serve` both host exactly this; neither adds behaviour of its own.
 */
export class ThreadHost {
  readonly key: string;
  private readonly panes = new Map<string, Pane>();
  /** Every timer and listener this host owns. Disposed first thing in dispose(), before any await, so
   *  nothing it holds fires or re-arms while the shutdown waits on the board. */
  private readonly disposables = new DisposableStore();
  private livenessTimer: TimerHandle | null = null;
  private disposed = false;
  /** Unsubscribes the board listener; that one lives until the board is closed, so the shutdown's own
   *  releases (host-stopped) still reach onBoardEvent. */
  private readonly unsubscribeBoard: () => void;
  private readonly binDir: string;
  private readonly agentFilesDir: string;
  private readonly launched = new Map<ProfileId, number>();
  readonly onPaneData = new Emitter<{ agentId: string; data: string }>();
  readonly onAgents = new Emitter<AgentInfo[]>();
  readonly onBoardEvent = new Emitter<BoardEvent>();
  readonly onPaneExit = new Emitter<{ agentId: string; name: string; exit: AgentRecord['exit'] }>();
  /** Each task's latest worktree hand-over, by the token it was for: the claim's answer and the assignment
   *  message wait on it. */
  private readonly issuing = new Map<string, { token: number; done: Promise<ClaimWorktree | null> }>();

  private constructor(
    readonly folder: string,
    readonly board: BoardService,
    readonly socket: AgentSocket,
    readonly registry: AgentRegistry,
    private readonly opts: ThreadHostOptions,
    rt: string,
    /** Git worktrees under claims, or null with the reason this Thread has none in `noWorktrees`. */
    readonly worktrees: WorktreeManager | null,
    private readonly noWorktrees: string,
  ) {
    this.key = threadKeyOf(folder);
    this.binDir = ensureCliShim(rt);
    this.agentFilesDir = join(rt, `agents-${this.key}`);
    fs.mkdirSync(this.agentFilesDir, { recursive: true, mode: 0o700 });
    this.unsubscribeBoard = board.onEvent((e) => {
      if (e.kind === 'grant') this.issueWorktree(e.taskId, e.agentId, e.token);
      else if (e.kind === 'reassign') {
        this.worktrees?.revoke(e.taskId, e.from.token, 'stale-token', `your claim on ${e.taskId} ended (reassigned)`);
        this.issueWorktree(e.taskId, e.to.agentId, e.to.token);
      } else if (e.kind === 'branch-recorded') this.worktrees?.recorded(e.taskId, e.record.sha);
      else if (e.kind === 'submitted') this.worktrees?.frozen(e.taskId, true);
      else if (e.kind === 'returned') this.worktrees?.frozen(e.taskId, false);
      else if (e.kind === 'claim-ended')
        this.worktrees?.revoke(
          e.taskId,
          e.token,
          e.reason === 'lapsed' ? 'lapsed' : 'stale-token',
          e.reason === 'lapsed' ? `your lease on ${e.taskId} lapsed; claim it again if it is still open` : `your claim on ${e.taskId} ended (${e.reason})`,
        );
      this.onBoardEvent.fire(e);
      this.tellAssignee(e);
      if (e.kind === 'grant' || e.kind === 'claim-ended' || e.kind === 'reassign') this.fireAgents();
      // A new lease or interval takes effect now, not after the old interval runs out.
      if (e.kind === 'settings-set' && this.livenessTimer) this.scheduleLiveness();
    });
  }

  static async open(opts: ThreadHostOptions): Promise<ThreadHost> {
    const folder = resolve(opts.folder);
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new Error(`${folder} is not a folder`);
    const key = threadKeyOf(folder);
    const board = await BoardService.open({ dir: join(opts.dataRoot, 'threads', key), threadId: key, goal: opts.goal ?? '', warn: opts.warn });
    const rt = runtimeDir(opts.runtimeRoot);
    const registry = new AgentRegistry();
    const hooks: AgentCallHooks = {};
    // The socket asks which pane a process is in once the host exists; until then nothing runs in a pane.
    let paneOf: (pid: number) => string | null = () => null;
    let socket: AgentSocket;
    try {
      socket = await AgentSocket.listen(socketPathFor(rt, key), registry, board, hooks, { perl: findOnPath('perl'), paneOf: (pid) => paneOf(pid) });
    } catch (err) {
      await board.close();
      throw err;
    }
    const git = await WorktreeManager.open(folder, board.dir, board, socket.path).catch((err: Error) => ({ reason: `git could not be used here: ${err.message}` }));
    const host = new ThreadHost(folder, board, socket, registry, opts, rt, git instanceof WorktreeManager ? git : null, 'reason' in git ? git.reason : '');
    paneOf = (pid) => host.paneOfProcess(pid);
    if (host.worktrees) {
      const wt = host.worktrees;
      await wt.fenceThreadFolder().catch((err: Error) => opts.warn?.(`forkbench: the Thread's folder could not be fenced for agents: ${err.message}`));
      hooks.readMove = (taskId, ref, to) => wt.readMove(taskId, ref, to);
      hooks.offRecord = (taskId) => void wt.repair(taskId).catch((err: Error) => opts.warn?.(`forkbench: could not put ${taskId}'s branch back at its record: ${err.message}`));
    }
    hooks.afterGrant = (taskId, token) => host.worktreeOf(taskId, token);
    hooks.onDone = (agentId, taskId) =>
      void host.verify(agentId, taskId).catch((err: Error) => {
        // A verify that outlives its Thread (closed mid-run) has nowhere to report; anything else is said.
        if (!host.disposed) opts.warn?.(`forkbench: verify of ${taskId} failed to run: ${err.message}`);
      });
    if (opts.liveness !== false) host.scheduleLiveness();
    return host;
  }

  // ------------------------------------------------------------------ worktrees

  isolation(): GitIsolation {
    return this.worktrees ? this.worktrees.isolation() : { isolated: false, reason: this.noWorktrees };
  }

  /** The worktrees, for a window: throws the reason when this Thread has none. */
  gitWorktrees(): WorktreeManager {
    if (this.worktrees) return this.worktrees;
    throw new WorktreeError('no-worktree', `this Thread has no worktrees: ${this.noWorktrees}`);
  }

  /**
   * A claim began: hand its worktree over (make it, or continue in the task's parked one). Notes the holder
   * and reviewer should see go on the task. If no worktree can be had, the claim ends and the task is blocked
   * with the reason, rather than let the agent work unfenced in the shared folder.
   */
  private issueWorktree(taskId: string, agentId: string, token: number): void {
    const wt = this.worktrees;
    if (!wt) return;
    // A large repository's checkout takes seconds: say so on the board while the holder waits.
    const slow = this.disposed
      ? null
      : this.disposables.timeout(() => {
          if (!this.disposed) void this.note(taskId, `Making the git worktree for ${taskId} (a large repository takes a while)…`).catch(() => undefined);
        }, WorktreeConstants.slowNoteMs);
    const done = wt.issue(taskId, agentId, token).finally(() => slow?.dispose()).then(
      async (issued) => {
        for (const n of issued.notes) await this.note(taskId, n);
        return issued;
      },
      async (err: Error) => {
        const why = gitReason(err);
        if (!this.disposed) await this.board.run((e) => e.failWorktree(taskId, token, `No worktree: ${why}`)).catch(() => undefined);
        throw new Error(why);
      },
    );
    // Whoever waits sees the failure; nobody waiting is fine too (the board already says it).
    done.catch(() => undefined);
    this.issuing.set(taskId, { token, done });
  }

  /** The worktree of the claim (task, token) once it is ready; null in a Thread without worktrees. */
  async worktreeOf(taskId: string, token: number): Promise<ClaimWorktree | null> {
    const pending = this.issuing.get(taskId);
    if (!pending || pending.token !== token) return null;
    return pending.done;
  }

  /**
   * Approve a task in review. Where the task has a worktree its branch is merged into the base first, and
   * only if the head was written under the submitting claim's token and merges cleanly: otherwise the task
   * stays in review with the reason as a note, and the base branch is untouched.
   */
  async approve(taskId: string, by: string = USER): Promise<void> {
    const t = this.board.state.tasks.get(taskId);
    const wt = this.worktrees;
    let merged: string | null = null;
    const branch = t?.state === 'review' && wt ? t.worktree : null;
    if (wt && t && branch) {
      try {
        merged = await wt.merge(taskId, t.title);
      } catch (err) {
        await this.note(taskId, `Not merged: ${gitReason(err as Error)}`);
        throw err;
      }
    }
    const r = await this.board.run((e) => e.approve(taskId, by));
    if (!r.ok) {
      if (merged) await this.note(taskId, `Merged as ${shortSha(merged)}, but approval was refused: ${r.error.message}`);
      throw Object.assign(new Error(r.error.message), { code: r.error.code });
    }
    if (!wt || !branch) return;
    await this.note(taskId, merged ? `Merged ${branch.branch} into ${branch.base} as ${shortSha(merged)}.` : `${branch.branch} had no commits that ${branch.base} lacks: nothing to merge.`);
    const said = await wt.cleanupMerged(taskId).catch((err: Error) => [`The worktree could not be removed: ${err.message}`]);
    for (const n of said) await this.note(taskId, n);
  }

  /** A note from the host itself, about git work on the task. */
  private note(taskId: string, text: string): Promise<unknown> {
    // git's messages are terminal output: as they are, the board could refuse them (control characters).
    return this.board.run((e) => e.userNote(taskId, outputAsText(text), 'forkbench'));
  }

  // ------------------------------------------------------------------ agents

  agents(): AgentInfo[] {
    return this.registry.all().map((r) => ({
      id: r.id,
      name: r.name,
      profile: r.profile,
      status: r.status,
      pid: r.pid,
      exit: r.exit,
      claims: this.board.engine.claimsOf(r.id),
    }));
  }

  /** Launch an agent in a new pane. Every launch is a new agent: new id, new secret. */
  async launch(profile: ProfileId, o: { cols?: number; rows?: number; command?: string; name?: string } = {}): Promise<AgentInfo> {
    if (this.disposed) throw new Error('this Thread is closed');
    const cols = o.cols ?? 100;
    const rows = o.rows ?? 30;
    // Names count up per profile and are never reused in a Thread's run, like the tabs a person remembers.
    const n = (this.launched.get(profile) ?? 0) + 1;
    this.launched.set(profile, n);
    // performance.now(), not the board clock: the liveness check compares it with pty output times, and the
    // board clock resumes from the journal, so it can run far ahead and make a silent agent look busy.
    const record = this.registry.create(profile, o.name ?? `${profile} ${n}`, performance.now());
    const filesDir = join(this.agentFilesDir, record.id);
    fs.mkdirSync(filesDir, { recursive: true, mode: 0o700 });
    const baseEnv = this.opts.env ?? process.env;
    let spec: ReturnType<typeof buildLaunch>;
    try {
      spec = buildLaunch(
        profile,
        {
          threadDir: this.folder,
          agentDir: filesDir,
          socketPath: this.socket.path,
          agentId: record.id,
          agentToken: record.secret,
          cliPath: CLI_SCRIPT,
          nodePath: process.execPath,
          binDir: this.binDir,
          leaseMs: this.board.state.settings.leaseMs,
          baseEnv,
          writableRoots: this.worktrees?.writableRoots() ?? [],
        },
        // A custom command line is run by the shell, so quoting and pipes work as the user typed them.
        o.command ? { command: '/bin/sh', args: ['-c', o.command] } : undefined,
      );
      await writeProfileFiles(spec.files, spec.links);
    } catch (err) {
      this.registry.remove(record.id);
      fs.rmSync(filesDir, { recursive: true, force: true });
      throw err;
    }
    // The plan's env carries the agent's identity (every profile builds it with forkbenchEnv).
    const env: Record<string, string | undefined> = { ...baseEnv, ...spec.env };
    let session: PtySession;
    try {
      session = PtySession.spawn(spec.command, spec.args, { cwd: this.folder, env, cols, rows });
    } catch (err) {
      record.status = 'exited';
      record.exit = { code: 127, signal: null };
      this.registry.revoke(record.id);
      this.fireAgents();
      throw new Error(`could not start ${spec.command}: ${(err as Error).message}`);
    }
    record.pid = session.pid;
    record.status = 'running';
    const now = performance.now();
    const pane: Pane = {
      record,
      session,
      launch: { profile, command: o.command, cols, rows, name: record.name },
      cpu: { lastCpuMs: 0, lastChangeAt: now },
      lastInputAt: 0,
      pendingMessages: [],
      notifyTimer: null,
      startedAt: now,
    };
    this.panes.set(record.id, pane);
    session.onData((data) => this.onPaneData.fire({ agentId: record.id, data }));
    // Death first (~1 ms after the kernel knows): the claims go. The exit follows once the tail has drained.
    session.onDeath(() => void this.died(pane));
    session.onExit((exit) => void this.exited(pane, exit.exitCode, exit.signal ?? null));
    this.fireAgents();
    return this.agents().find((a) => a.id === record.id) as AgentInfo;
  }

  /** A relaunch is a new agent with the same profile; the old tab's history stays with the old id. */
  relaunch(agentId: string): Promise<AgentInfo> {
    const p = this.panes.get(agentId);
    if (!p) throw new Error(`no agent ${agentId}`);
    return this.launch(p.launch.profile, { cols: p.launch.cols, rows: p.launch.rows, command: p.launch.command });
  }

  /** The pane was closed: a hard signal. Claims are released first, then the process group is killed. */
  async closePane(agentId: string): Promise<void> {
    const p = this.panes.get(agentId);
    if (!p) return;
    this.registry.revoke(agentId);
    await this.board.apply((e) => e.releaseAllHeldBy(agentId, 'pane-closed'));
    this.panes.delete(agentId);
    p.notifyTimer?.dispose();
    p.notifyTimer = null;
    if (!p.session.exit) await p.session.kill();
    p.session.dispose();
    this.clearLocksWhenGone(p);
    // Its config files hold its (now dead) secret; nothing will read them again.
    fs.rmSync(join(this.agentFilesDir, agentId), { recursive: true, force: true });
    this.forget(agentId);
  }

  input(agentId: string, data: string): void {
    const p = this.panes.get(agentId);
    if (!p) return;
    p.lastInputAt = performance.now();
    p.session.write(data);
  }

  resize(agentId: string, cols: number, rows: number): void {
    const p = this.panes.get(agentId);
    if (!p) return;
    p.launch.cols = cols;
    p.launch.rows = rows;
    p.session.resize(cols, rows);
  }

  /** The agent pane a process runs in (its name), or null: how the host tells a person's git from an agent's. */
  paneOfProcess(pid: number): string | null {
    const roots = new Map<number, string>();
    for (const p of this.panes.values()) if (p.record.pid !== null) roots.set(p.record.pid, p.record.name);
    return paneOfProcess(pid, roots);
  }

  /**
   * Git locks an agent left behind (killed -9 inside \`git commit\`) are cleared once nothing of its process
   * group is left to finish them; until then they are git's own business.
   */
  private clearLocksWhenGone(pane: Pane, triesLeft: number = LockConstants.tries): void {
    const pgid = pane.record.pid;
    if (!this.worktrees || pgid === null || this.disposed) return;
    if (groupAlive(pgid)) {
      if (triesLeft > 0) this.disposables.timeout(() => this.clearLocksWhenGone(pane, triesLeft - 1), LockConstants.retryMs);
      return;
    }
    const cleared = this.worktrees.clearLocksOf(pane.record.id);
    if (cleared.length) this.opts.warn?.(`forkbench: cleared ${cleared.length} git lock(s) left by ${pane.record.name}: ${cleared.join(', ')}`);
  }

  /** An agent that exists and has not exited: one whose claims are still meaningful. */
  isAgentRunning(agentId: string): boolean {
    const r = this.registry.get(agentId);
    return r !== undefined && r.status !== 'exited';
  }

  /** A window went away: it no longer paces any pane of this Thread. */
  detachEverywhere(consumer: string): void {
    for (const p of this.panes.values()) p.session.detach(consumer);
  }

  attach(agentId: string, consumer: string): void {
    this.panes.get(agentId)?.session.attach(consumer);
  }

  detach(agentId: string, consumer: string): void {
    this.panes.get(agentId)?.session.detach(consumer);
  }

  ack(agentId: string, chars: number, consumer: string): void {
    this.panes.get(agentId)?.session.ack(chars, consumer);
  }

  /** The pane's screen and scrollback, for a window that opens or reloads. */
  async screen(agentId: string): Promise<string> {
    const p = this.panes.get(agentId);
    if (!p) return '';
    await p.session.flushMirror();
    return p.session.serialize();
  }

  session(agentId: string): PtySession | undefined {
    return this.panes.get(agentId)?.session;
  }

  /**
   * The agent's process is dead (the pane's child-exit watcher knew within ~1 ms): the hard signal. Its
   * secret dies and every claim goes now, with the reason, no timer involved, while the pane is still
   * reading the output tail; `exited` follows with the exit status. Not waiting for that tail is what makes
   * kill -9 -> claim-ended a few ms instead of the 20+ ms of the session's drain and exit quiet periods.
   */
  private async died(pane: Pane): Promise<void> {
    const id = pane.record.id;
    this.registry.revoke(id);
    // The tab says so now too: a window paced by flow control may take a while to take in the tail, and the
    // person pressing Ctrl-C under a flood should not wait for it. The exit status follows with `exited`.
    pane.record.status = 'exited';
    if (!this.disposed) await this.board.apply((e) => e.releaseAllHeldBy(id, 'process-exited')).catch(() => undefined);
    this.clearLocksWhenGone(pane);
    if (this.panes.get(id) === pane) this.fireAgents();
  }

  private async exited(pane: Pane, code: number, signal: number | null): Promise<void> {
    const id = pane.record.id;
    pane.record.status = 'exited';
    pane.record.exit = { code, signal };
    this.registry.revoke(id);
    pane.notifyTimer?.dispose();
    pane.notifyTimer = null;
    // Normally `died` already ended every claim; this catches a session that could not tell death apart
    // from exit, and anything granted to the agent by a person in between. Nothing held: nothing written.
    if (!this.disposed) await this.board.apply((e) => e.releaseAllHeldBy(id, 'process-exited')).catch(() => undefined);
    // A pane the person closed (or a Thread being shut) ends as asked: no "agent exited" notice for it.
    if (this.disposed || this.panes.get(id) !== pane) return;
    this.onPaneExit.fire({ agentId: id, name: pane.record.name, exit: pane.record.exit });
    this.fireAgents();
  }

  /** Drop an agent the user closed: it no longer appears in the agent list. */
  private forget(agentId: string): void {
    this.registry.remove(agentId);
    this.fireAgents();
  }

  private fireAgents(): void {
    if (!this.disposed) this.onAgents.fire(this.agents());
  }

  // ------------------------------------------------------------------ liveness

  private scheduleLiveness(): void {
    this.livenessTimer?.dispose();
    this.livenessTimer = null;
    // A round that was in flight when dispose() began ends here: it must not arm another.
    if (this.disposed) return;
    const every = effectiveRenewIntervalMs(this.board.state.settings);
    this.livenessTimer = this.disposables.timeout(() => {
      this.livenessTimer = null;
      // A round that overlaps a shutdown finds the board closed: that is the end of checking, not an error.
      void this.checkLiveness()
        .catch((err: Error) => {
          if (!this.disposed) this.opts.warn?.(`forkbench: liveness check failed: ${err.message}`);
        })
        .finally(() => this.scheduleLiveness());
    }, every);
  }

  /**
   * One round of the background check: renew the claims of agents that are alive and making progress
   * (pty output, a board call or CPU time within the lease window); mark the rest stalled and let their
   * leases run out. A stopped process or a zombie is never renewed.
   */
  async checkLiveness(): Promise<void> {
    const leaseMs = this.board.state.settings.leaseMs;
    for (const p of [...this.panes.values()]) {
      const r = p.record;
      if (this.disposed) return;
      if (r.status === 'exited' || r.pid === null) continue;
      let facts: TreeCpu;
      try {
        facts = await readTreeCpu(r.pid);
      } catch {
        continue;
      }
      // The Thread may have been shut while /proc was read: its claims are released, nothing is renewed.
      if (this.disposed) return;
      const now = performance.now();
      if (facts.cpuMs > p.cpu.lastCpuMs) {
        p.cpu.lastCpuMs = facts.cpuMs;
        p.cpu.lastChangeAt = now;
      }
      const lastProgressAt = Math.max(p.session.lastOutputAt, r.lastBoardCallAt, p.cpu.lastChangeAt);
      const verdict = judgeLiveness({ state: facts.state, lastProgressAt, now, leaseMs });
      const before = r.status;
      if (verdict === 'renew') {
        r.status = 'running';
        if (this.board.engine.claimsOf(r.id).length) await this.board.apply((e) => e.renewLive(r.id));
      } else if (verdict === 'stalled') {
        r.status = 'stalled';
      }
      if (r.status !== before) this.fireAgents();
    }
  }

  // ------------------------------------------------------------------ verify and assignment

  /** An agent said done: run the verify command if there is one; otherwise the task waits for a person. */
  async verify(agentId: string, taskId: string): Promise<void> {
    const t = this.board.state.tasks.get(taskId);
    const command = t?.verify ?? this.board.state.settings.verify;
    if (!t || !command) return;
    // A test suite can run for minutes: say so on the board, so nobody wonders why the task sits in review.
    await this.board.run((e) => e.userNote(taskId, `Verifying with \`${command}\`…`, 'verify'));
    // The work under review is in the task's worktree, not in the shared folder.
    const cwd = t.worktree && this.worktrees ? this.worktrees.workdirOf(t.worktree.path) : this.folder;
    const outcome = await runVerify(command, cwd, this.opts.verifyTimeoutMs);
    const now = this.board.state.tasks.get(taskId);
    // Only judge the claim that said done: if the task moved on meanwhile, the result is about old work.
    if (!now || now.state !== 'review' || (now.claim && now.claim.agentId !== agentId)) return;
    if (outcome.passed) {
      await this.board.run((e) => e.userNote(taskId, `Verify \`${command}\` passed in ${(outcome.durationMs / 1000).toFixed(1)} s.`, 'verify'));
      // A refused merge is already a note on the task, which stays in review for a person.
      await this.approve(taskId, 'verify').catch(() => undefined);
    } else {
      await this.board.run((e) => e.rejectReview(taskId, failureNote(command, outcome), 'verify'));
    }
  }

  /** When a person gives a task to an agent, tell the agent in its pane, once the pane is quiet. */
  private tellAssignee(e: BoardEvent): void {
    let agentId: string | null = null;
    let token = 0;
    if (e.kind === 'grant' && e.by === USER) {
      agentId = e.agentId;
      token = e.token;
    } else if (e.kind === 'reassign' && e.by === USER) {
      agentId = e.to.agentId;
      token = e.to.token;
    }
    if (!agentId) return;
    const p = this.panes.get(agentId);
    if (!p || p.record.status === 'exited') return;
    const t = this.board.state.tasks.get(e.kind === 'grant' || e.kind === 'reassign' ? e.taskId : '');
    const text =
      `You have been assigned ${t?.id} "${t?.title}" on the Forkbench board (fencing token ${token}). ` +
      `Run \`forkbench show ${t?.id}\`, then pass --token ${token} to renew/note/done.`;
    // The message names the worktree, so it waits until the worktree exists; a failed one says nothing here
    // (the task is blocked with the reason, which the window shows).
    const issued = t ? this.worktreeOf(t.id, token) : Promise.resolve(null);
    void issued.then(
      (wt) => {
        p.pendingMessages.push(wt ? `${text} Work in its git worktree: cd '${wt.workdir}' (branch ${wt.branch}).` : text);
        this.deliverWhenQuiet(p);
      },
      () => undefined,
    );
  }

  private deliverWhenQuiet(p: Pane): void {
    if (p.notifyTimer || this.disposed) return;
    const quiet = this.opts.notifyQuietMs ?? NotifyConstants.quietMs;
    const tick = () => {
      p.notifyTimer = null;
      if (this.disposed || p.record.status === 'exited' || !p.pendingMessages.length) return;
      const now = performance.now();
      // Never in the middle of a person's typing, nor while the agent is printing.
      if (now - p.lastInputAt < quiet || now - p.session.lastOutputAt < quiet) {
        p.notifyTimer = this.disposables.timeout(tick, NotifyConstants.pollMs);
        return;
      }
      const text = p.pendingMessages.splice(0).join(' ');
      // In a plain shell the message must not run as a command: as a comment it is shown and ignored.
      const shellLike = p.launch.profile === 'shell' || p.launch.profile === 'custom';
      p.session.write(p.session.asPaste(`${shellLike ? '# ' : ''}${text}`));
      this.submitWhenEchoed(p, performance.now());
    };
    p.notifyTimer = this.disposables.timeout(tick, NotifyConstants.pollMs);
  }

  /** Enter, on its own, once the message's echo has settled. A TUI takes a long chunk that ends in Enter for
   *  a paste and the Enter for a newline inside it (Claude Code does), so the message would sit unsent. */
  private submitWhenEchoed(p: Pane, sentAt: number): void {
    const check = () => {
      p.notifyTimer = null;
      if (this.disposed || p.record.status === 'exited') return;
      const now = performance.now();
      if (now - p.session.lastOutputAt < NotifyConstants.echoQuietMs && now - sentAt < NotifyConstants.echoMaxMs) {
        p.notifyTimer = this.disposables.timeout(check, NotifyConstants.echoQuietMs);
        return;
      }
      p.session.write('\r');
      // Assignments that came while this one was being typed wait for the pane to be quiet again.
      if (p.pendingMessages.length) this.deliverWhenQuiet(p);
    };
    p.notifyTimer = this.disposables.timeout(check, NotifyConstants.echoQuietMs);
  }

  /** Shut the Thread: every claim released with the reason, every pane killed, the board flushed. */
  async dispose(reason: 'host-stopped' = 'host-stopped'): Promise<void> {
    if (this.disposed) return;
    // First, before any await: a liveness round in flight finds `disposed` and neither renews nor re-arms,
    // and the store clears the liveness timer, every pane's notify poll and any slow-worktree note, so
    // nothing fires while the board is busy with the releases below.
    this.disposed = true;
    this.livenessTimer = null;
    this.disposables.dispose();
    // Every claim ends now with the reason (the board stays open for exactly this write).
    await this.board.apply((e) => e.grace(() => false, reason)).catch(() => undefined);
    await Promise.all(
      [...this.panes.values()].map(async (p) => {
        p.notifyTimer = null;
        if (!p.session.exit) await p.session.kill().catch(() => undefined);
        p.session.dispose();
      }),
    );
    this.panes.clear();
    // A worktree being made writes to the board when done: let it finish before the board closes.
    await this.worktrees?.idle();
    await this.worktrees?.unfenceThreadFolder().catch(() => undefined);
    fs.rmSync(this.agentFilesDir, { recursive: true, force: true });
    await this.socket.close();
    await this.board.close();
    this.unsubscribeBoard();
    this.onPaneData.dispose();
    this.onAgents.dispose();
    this.onBoardEvent.dispose();
    this.onPaneExit.dispose();
  }
}

/** A git failure as a person reads it: our own problems say what to do; git's own errors are quoted. */
function gitReason(err: Error): string {
  return err instanceof WorktreeError ? err.message : `git failed: ${err.message}`;
}

/** Whether any process of a group is left (signal 0 asks without sending anything). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const LockConstants = {
  /** A group killed -9 is gone within milliseconds; its children may take a moment to be reaped. */
  retryMs: 250,
  /** 40 × 250 ms: a background job of the agent that outlives it by ten seconds keeps its locks. */
  tries: 40,
} as const;

export const WorktreeConstants = {
  /** A worktree of a small repository is ready in ~0.1–0.5 s here; past 1.5 s the holder and the window are told why they wait. */
  slowNoteMs: 1500,
} as const;

export const NotifyConstants = {
  /** A person types in bursts; 1.5 s without a keystroke or output is a pause, not a breath. */
  quietMs: 1500,
  pollMs: 250,
  /** The echo of a typed message has settled when the pane prints nothing for this long; a TUI redraws
   *  its input box within a frame or two (16-33 ms), so 100 ms is settled with room to spare. */
  echoQuietMs: 100,
  /** A pane that never stops printing still gets its Enter after this long. */
  echoMaxMs: 2_000,
} as const;

