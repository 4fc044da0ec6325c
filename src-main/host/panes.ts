import * as fs from 'node:fs';
import { join } from 'node:path';
import type { HardReleaseReason } from '../../src-shared/board/model.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import type { AgentRecord, AgentRegistry } from '../agents/agentRegistry.js';
import type { LivenessSubject } from '../agents/liveness.js';
import { paneOfProcess } from '../agents/peerCredentials.js';
import { buildLaunch, writeProfileFiles, type AgentKind as ProfileId } from '../agents/profiles.js';
import { PtySession } from '../pty/ptySession.js';
import { PaneTypist } from './assignmentTyping.js';
import type { AgentStates } from './agentStates.js';
import { CLI_SCRIPT } from './cliShim.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { DEFAULT_TERMINAL_SIZE } from '../../src-shared/terminal/terminalSize.js';

const DEFAULT_SIZE = DEFAULT_TERMINAL_SIZE;

export const LockConstants = {
  /** A group killed -9 is gone within milliseconds; its children may take a moment to be reaped. */
  retryMs: 250,
  /** 40 × 250 ms: a background job of the agent that outlives it by ten seconds keeps its locks. */
  tries: 40,
} as const;

export interface Pane extends LivenessSubject {
  record: AgentRecord;
  session: PtySession;
  launch: { profile: ProfileId; command?: string; cols: number; rows: number; name: string };
  /** Types the host's messages into the pane when it is quiet. */
  typist: PaneTypist;
}

export interface PanesDeps {
  folder: string;
  board: BoardService;
  registry: AgentRegistry;
  socketPath: string;
  /** The per-install CLI shim folder, put first on each agent's PATH. */
  binDir: string;
  /** Where each agent's config files (holding its secret) go, one folder per agent. */
  agentFilesDir: string;
  /** The environment agents start from. */
  env: Record<string, string | undefined>;
  /** Folders outside the Thread's folder that agents edit (the worktrees). */
  writableRoots: () => string[];
  /** Clear the git locks a gone agent left; returns what was cleared. */
  clearLocksOf: ((agentId: string) => string[]) | null;
  typingQuietMs?: number;
  warn?: (message: string) => void;
  /** Each pane's agent state (hooks, terminal signals, screen). */
  states?: AgentStates;
}

/**
 * The agents' panes: each launch is a new agent (id, secret, pty); the one way an agent goes (`agentGone`)
 * revokes its secret, marks it exited and releases its claims with the real reason, whether its pane was
 * closed or its process died. Windows reach a pane's terminal through `get`.
 */
export class Panes {
  private readonly panes = new Map<string, Pane>();
  private readonly store = new DisposableStore();
  private readonly launched = new Map<ProfileId, number>();
  private closing = false;
  readonly onData = new Emitter<{ agentId: string; data: string }>();
  readonly onAgents = new Emitter<AgentInfo[]>();
  readonly onExit = new Emitter<{ agentId: string; name: string; exit: AgentRecord['exit'] }>();

  constructor(private readonly d: PanesDeps) {
    fs.mkdirSync(d.agentFilesDir, { recursive: true, mode: 0o700 });
  }

  get(agentId: string): Pane | undefined {
    return this.panes.get(agentId);
  }

  all(): Iterable<Pane> {
    return this.panes.values();
  }

  agents(): AgentInfo[] {
    return this.d.registry.all().map((r) => ({
      id: r.id,
      name: r.name,
      profile: r.profile,
      status: r.status,
      pid: r.pid,
      exit: r.exit,
      claims: this.d.board.engine.claimsOf(r.id),
      state: this.d.states?.info(r.id) ?? null,
    }));
  }

  fireAgents(): void {
    if (!this.closing) this.onAgents.fire(this.agents());
  }

  /** An agent that exists and has not exited: one whose claims are still meaningful. */
  isRunning(agentId: string): boolean {
    const r = this.d.registry.get(agentId);
    return r !== undefined && r.status !== 'exited';
  }

  /** Launch an agent in a new pane. Every launch is a new agent: new id, new secret. */
  async launch(profile: ProfileId, o: { cols?: number; rows?: number; command?: string; name?: string } = {}): Promise<AgentInfo> {
    if (this.closing) throw new Error('this Thread is closed');
    const { d } = this;
    const cols = o.cols ?? DEFAULT_SIZE.cols;
    const rows = o.rows ?? DEFAULT_SIZE.rows;
    // Names count up per profile and are never reused in a Thread's run, like the tabs a person remembers.
    const n = (this.launched.get(profile) ?? 0) + 1;
    this.launched.set(profile, n);
    // performance.now(), not the board clock: the liveness check compares it with pty output times, and the
    // board clock resumes from the journal, so it can run far ahead and make a silent agent look busy.
    const record = d.registry.create(profile, o.name ?? `${profile} ${n}`, performance.now());
    const filesDir = join(d.agentFilesDir, record.id);
    fs.mkdirSync(filesDir, { recursive: true, mode: 0o700 });
    let spec: ReturnType<typeof buildLaunch>;
    try {
      spec = buildLaunch(
        profile,
        {
          threadDir: d.folder,
          agentDir: filesDir,
          socketPath: d.socketPath,
          agentId: record.id,
          agentToken: record.secret,
          cliPath: CLI_SCRIPT,
          nodePath: process.execPath,
          binDir: d.binDir,
          leaseMs: d.board.state.settings.leaseMs,
          renewMs: effectiveRenewIntervalMs(d.board.state.settings),
          baseEnv: d.env,
          writableRoots: d.writableRoots(),
        },
        // A custom command line is run by the shell, so quoting and pipes work as the user typed them.
        o.command ? { command: '/bin/sh', args: ['-c', o.command] } : undefined,
      );
      await writeProfileFiles(spec.files, spec.links);
    } catch (err) {
      d.registry.remove(record.id);
      fs.rmSync(filesDir, { recursive: true, force: true });
      throw err;
    }
    // The plan's env carries the agent's identity (every profile builds it with forkbenchEnv).
    const env: Record<string, string | undefined> = { ...d.env, ...spec.env };
    let session: PtySession;
    try {
      session = PtySession.spawn(spec.command, spec.args, { cwd: d.folder, env, cols, rows });
    } catch (err) {
      record.status = 'exited';
      record.exit = { code: 127, signal: null };
      d.registry.forgetSecret(record.id);
      this.fireAgents();
      throw new Error(`could not start ${spec.command}: ${(err as Error).message}`);
    }
    record.pid = session.pid;
    record.status = 'running';
    const pane: Pane = {
      record,
      session,
      launch: { profile, command: o.command, cols, rows, name: record.name },
      typist: new PaneTypist(session, profile === 'shell' || profile === 'custom', d.typingQuietMs),
      startedAt: performance.now(),
      get lastOutputAt() {
        return session.lastOutputAt;
      },
    };
    this.panes.set(record.id, pane);
    d.states?.track(record.id, record.name, profile, session);
    session.onData((data) => this.onData.fire({ agentId: record.id, data }));
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
  async close(agentId: string): Promise<void> {
    const p = this.panes.get(agentId);
    if (!p) return;
    await this.agentGone(p, 'pane-closed');
    this.panes.delete(agentId);
    if (!p.session.exit) await p.session.kill();
    p.session.dispose();
    this.clearLocksWhenGone(p);
    // Its config files hold its (now dead) secret; nothing will read them again.
    fs.rmSync(join(this.d.agentFilesDir, agentId), { recursive: true, force: true });
    // Closed by the person: it no longer appears in the agent list.
    this.d.registry.remove(agentId);
    this.d.states?.forget(agentId);
    this.fireAgents();
  }

  input(agentId: string, data: string): void {
    const p = this.panes.get(agentId);
    if (!p) return;
    p.typist.noteInput();
    this.d.states?.input(agentId, data);
    p.session.write(data);
  }

  resize(agentId: string, cols: number, rows: number): void {
    const p = this.panes.get(agentId);
    if (!p) return;
    p.launch.cols = cols;
    p.launch.rows = rows;
    p.session.resize(cols, rows);
  }

  /** A window went away: it no longer paces any pane of this Thread. */
  detachEverywhere(consumer: string): void {
    for (const p of this.panes.values()) p.session.detach(consumer);
  }

  /** The pane's screen and scrollback, for a window that opens or reloads. */
  async screen(agentId: string): Promise<string> {
    const p = this.panes.get(agentId);
    if (!p) return '';
    await p.session.flushMirror();
    return p.session.serialize();
  }

  /** Type a message of the host's into the agent's pane, when it is quiet; nothing for a gone agent. */
  tell(agentId: string, text: string): void {
    const p = this.panes.get(agentId);
    if (p && p.record.status !== 'exited') p.typist.say(text);
  }

  /** The agent pane a process runs in (its name), or null: how the host tells a person's git from an agent's. */
  paneOfProcess(pid: number): string | null {
    const roots = new Map<number, string>();
    for (const p of this.panes.values()) if (p.record.pid !== null) roots.set(p.record.pid, p.record.name);
    return paneOfProcess(pid, roots);
  }

  /**
   * The one way an agent goes: its secret dies (its next call is refused), it shows as exited, nothing more
   * is typed into it, and every claim it holds ends now with the reason — no timer involved.
   */
  private async agentGone(pane: Pane, reason: HardReleaseReason): Promise<void> {
    const id = pane.record.id;
    this.d.registry.forgetSecret(id);
    pane.record.status = 'exited';
    pane.typist.dispose();
    this.d.states?.gone(id);
    if (!this.closing) await this.d.board.apply((e) => e.releaseAllHeldBy(id, reason));
  }

  /**
   * The agent's process is dead (the pane's child-exit watcher knew within ~1 ms): the hard signal, taken
   * while the pane is still reading the output tail; `exited` follows with the exit status. Not waiting for
   * that tail is what makes kill -9 -> claim-ended a few ms instead of the 20+ ms of the session's drain.
   * The tab says so now too: a person pressing Ctrl-C under a flood should not wait for the tail.
   */
  private async died(pane: Pane): Promise<void> {
    await this.agentGone(pane, 'process-exited').catch(() => undefined);
    this.clearLocksWhenGone(pane);
    if (this.panes.get(pane.record.id) === pane) this.fireAgents();
  }

  private async exited(pane: Pane, code: number, signal: number | null): Promise<void> {
    pane.record.exit = { code, signal };
    // Normally `died` already ended every claim; this catches a session that could not tell death apart
    // from exit, and anything granted to the agent by a person in between. Nothing held: nothing written.
    await this.agentGone(pane, 'process-exited').catch(() => undefined);
    // A pane the person closed (or a Thread being shut) ends as asked: no "agent exited" notice for it.
    if (this.closing || this.panes.get(pane.record.id) !== pane) return;
    this.onExit.fire({ agentId: pane.record.id, name: pane.record.name, exit: pane.record.exit });
    this.fireAgents();
  }

  /**
   * Git locks an agent left behind (killed -9 inside `git commit`) are cleared once nothing of its process
   * group is left to finish them; until then they are git's own business.
   */
  private clearLocksWhenGone(pane: Pane, triesLeft: number = LockConstants.tries): void {
    const pgid = pane.record.pid;
    const clearLocksOf = this.d.clearLocksOf;
    if (!clearLocksOf || pgid === null || this.closing) return;
    if (groupAlive(pgid)) {
      if (triesLeft > 0) this.store.timeout(() => this.clearLocksWhenGone(pane, triesLeft - 1), LockConstants.retryMs);
      return;
    }
    const cleared = clearLocksOf(pane.record.id);
    if (cleared.length) this.d.warn?.(`forkbench: cleared ${cleared.length} git lock(s) left by ${pane.record.name}: ${cleared.join(', ')}`);
  }

  /** The Thread is shutting (its claims already released by the board): no more pushes, timers or typing. */
  stop(): void {
    this.closing = true;
    this.store.dispose();
    for (const p of this.panes.values()) p.typist.dispose();
  }

  /** After stop(): every pane's process group killed and its session disposed. */
  async killAll(): Promise<void> {
    await Promise.all(
      [...this.panes.values()].map(async (p) => {
        if (!p.session.exit) await p.session.kill().catch(() => undefined);
        p.session.dispose();
      }),
    );
    this.panes.clear();
    fs.rmSync(this.d.agentFilesDir, { recursive: true, force: true });
    this.onData.dispose();
    this.onAgents.dispose();
    this.onExit.dispose();
  }
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
