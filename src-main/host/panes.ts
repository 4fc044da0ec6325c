import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { changesHolder } from '../../src-shared/board/eventKinds.js';
import type { HardReleaseReason } from '../../src-shared/board/model.js';
import { compareTaskIds } from '../../src-shared/board/reducer.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentInfo, ProfileIdShared } from '../../src-shared/protocol/windowApi.js';
import type { AgentRecord } from '../agents/agentRegistry.js';
import { callerOf, whereIs, type Caller, type Whereabouts } from '../agents/peerCredentials.js';
import { buildLaunch, writeProfileFiles } from '../agents/profiles.js';
import type { PaneSession } from '../pty/paneSession.js';
import { PaneTypist } from './assignmentTyping.js';
import { clearGoneAgentsLocks, clearLocksWhenGone, type GoneAgent, type LockClearing } from './paneLocks.js';
import { localPtys, LockConstants, type AdoptedPane, type Pane, type PanesDeps } from './paneTypes.js';

export { localPtys, LockConstants, type AdoptedPane, type Pane, type PanesDeps };
import { cliScript, nodeRuntime } from '../base/nodeRuntime.js';
import type { StoredAgent } from './agentStore.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { DEFAULT_TERMINAL_SIZE } from '../../src-shared/terminal/terminalSize.js';

/**
 * The agents' panes: each launch is a new agent (id, secret, pty); the one way an agent goes (`agentGone`)
 * revokes its secret, marks it exited and releases its claims with the real reason, whether its pane was
 * closed or its process died. Windows reach a pane's terminal through `get`.
 */
export class Panes {
  private readonly panes = new Map<string, Pane>();
  /** Verify commands running: their root's pid, and the agent whose done they check. */
  private readonly verifyRoots = new Map<number, string>();
  private readonly store = new DisposableStore();
  private closing = false;
  readonly onData = new Emitter<{ agentId: string; data: string }>();
  readonly onAgents = new Emitter<AgentInfo[]>();
  readonly onExit = new Emitter<{ agentId: string; name: string; exit: AgentRecord['exit'] }>();

  constructor(private readonly d: PanesDeps) {
    fs.mkdirSync(d.agentFilesDir, { recursive: true, mode: 0o700 });
    // The agents of earlier runs come back as exited tabs (their names' numbers are counted on from).
    d.sessions.restoreInto(d.registry, performance.now());
    // A state change (working, waiting for you, ...) redraws the agent list.
    if (d.states) this.store.add(d.states.onChange.event(() => this.fireAgents()));
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
      // In display order: the window draws this list as it comes, and computes no claims of its own.
      claims: this.d.board.engine.claimsOf(r.id).sort(compareTaskIds),
      resumable: r.status === 'exited' && this.d.sessions.resumable(r.id),
      state: this.d.states?.info(r.id) ?? null,
    }));
  }

  fireAgents(): void {
    if (!this.closing) this.onAgents.fire(this.agents());
  }

  /** The board's event: one that can change who holds what (grant, release, lapse, drag, approval, an agent's
   *  exit) sends the windows the agent list again, so each tab's claims are the host's and never stale. */
  follow(e: BoardEvent): void {
    if (changesHolder(e.kind)) this.fireAgents();
  }

  /** An agent that exists and has not exited: one whose claims are still meaningful. */
  isRunning(agentId: string): boolean {
    const r = this.d.registry.get(agentId);
    return r !== undefined && r.status !== 'exited';
  }

  /** Launch an agent in a new pane. Every launch is a new agent: new id, new secret. */
  async launch(profile: ProfileIdShared, o: { cols?: number; rows?: number; command?: string; name?: string } = {}): Promise<AgentInfo> {
    if (this.closing) throw new Error('this Thread is closed');
    const { d } = this;
    const cols = o.cols ?? DEFAULT_TERMINAL_SIZE.cols;
    const rows = o.rows ?? DEFAULT_TERMINAL_SIZE.rows;
    // Names count up per profile and are never reused in a Thread, across host restarts too (AgentNumbers):
    // the event log and the journal keep naming the agents of earlier runs.
    const n = d.sessions.numbers.next(profile);
    // performance.now(), not the board clock: the liveness check compares it with pty output times, and the
    // board clock resumes from the journal, so it can run far ahead and make a silent agent look busy.
    const record = d.registry.create(profile, o.name ?? `${profile} ${n}`, performance.now(), n);
    const stored: StoredAgent = { id: record.id, profile, name: record.name, cwd: d.folder, sessionId: null, state: 'running', startedAt: Date.now(), cols, rows };
    if (o.command) stored.command = o.command;
    return this.start(record, stored, null, true);
  }

  /**
   * Starts the agent's CLI again on its own conversation, after its process is gone: the same agent (id,
   * name, record) with a new process and a new secret. The claims it held ended with its old process; it
   * claims again through the board as any agent does (a new grant, a new token).
   */
  async resume(agentId: string): Promise<AgentInfo> {
    if (this.closing) throw new Error('this Thread is closed');
    const { d } = this;
    const stored = d.sessions.get(agentId);
    if (!stored) throw new Error(`no agent ${agentId}`);
    if (this.isRunning(agentId)) throw new Error(`${stored.name} is still running`);
    const sessionId = await d.sessions.resumeId(agentId, d.env);
    // Its old pane (if this host ran it) is over: the tab goes on with the new process.
    const old = this.panes.get(agentId);
    if (old) {
      this.panes.delete(agentId);
      old.session.dispose();
    }
    const record = d.registry.revive(agentId, performance.now());
    return this.start(record, { ...stored, cols: old?.launch.cols ?? stored.cols, rows: old?.launch.rows ?? stored.rows }, sessionId, false);
  }

  private async start(record: AgentRecord, stored: StoredAgent, resumeId: string | null, fresh: boolean): Promise<AgentInfo> {
    const { d } = this;
    const { profile, cols, rows } = stored as StoredAgent & { profile: ProfileIdShared };
    const command = stored.command;
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
          cliPath: cliScript(),
          nodePath: nodeRuntime().node,
          binDir: d.binDir,
          leaseMs: d.board.state.settings.leaseMs,
          renewMs: effectiveRenewIntervalMs(d.board.state.settings),
          baseEnv: d.env,
          writableRoots: d.writableRoots(),
          stateDir: d.sessions.stateDirOf(record.id),
        },
        // A custom command line is run by the shell, so quoting and pipes work as the user typed them.
        command ? { command: '/bin/sh', args: ['-c', command] } : undefined,
      );
      spec = d.sessions.plan(stored, spec, { ...d.env, ...spec.env }, resumeId);
      await writeProfileFiles(spec.files, spec.links);
    } catch (err) {
      if (fresh) {
        d.registry.remove(record.id);
        d.sessions.forget(record.id);
        fs.rmSync(filesDir, { recursive: true, force: true });
      } else {
        // A resume that could not start leaves the agent as it was: exited, its conversation still there.
        d.registry.forgetSecret(record.id);
        record.status = 'exited';
        d.sessions.exited(record.id, d.env);
        this.fireAgents();
      }
      throw err;
    }
    // The plan's env carries the agent's identity (every profile builds it with forkbenchEnv).
    const env: Record<string, string | undefined> = { ...d.env, ...spec.env };
    let session: PaneSession;
    try {
      session = await (d.ptys ?? localPtys).spawn(
        spec.command,
        spec.args,
        { cwd: d.folder, env, cols, rows },
        { threadKey: d.threadKey ?? '', agentId: record.id, secretDigest: record.secretDigest, socketPath: d.socketPath, profile, name: record.name, command },
      );
    } catch (err) {
      record.status = 'exited';
      record.exit = { code: 127, signal: null };
      d.registry.forgetSecret(record.id);
      d.sessions.exited(record.id, env);
      this.fireAgents();
      throw new Error(`could not start ${spec.command}: ${(err as Error).message}`);
    }
    record.pid = session.pid;
    record.status = 'running';
    this.wire(record, session, { profile, command, cols, rows, name: record.name });
    this.fireAgents();
    return this.agents().find((a) => a.id === record.id) as AgentInfo;
  }

  /**
   * Take back the panes a pty host kept while this board host was down: each is the same agent (id,
   * secret, and the socket path its environment already names), so its next board call is accepted.
   */
  adopt(found: AdoptedPane[], gone: Array<{ profile: string; name: string }> = []): void {
    // Names keep counting from the highest one used, the gone agents' too: after `shell 2` comes `shell 3`.
    this.d.sessions.numbers.sawAll([...found, ...gone]);
    for (const f of found) {
      const record = this.d.registry.adopt({ id: f.agentId, name: f.name, profile: f.profile, secretDigest: f.secretDigest, pid: f.session.pid }, performance.now());
      this.wire(record, f.session, { profile: f.profile as ProfileIdShared, command: f.command, cols: f.cols, rows: f.rows, name: f.name });
    }
    if (found.length) this.fireAgents();
  }

  private wire(record: AgentRecord, session: PaneSession, launch: Pane['launch']): void {
    const pane: Pane = {
      record,
      session,
      launch,
      typist: new PaneTypist(session, launch.profile === 'shell' || launch.profile === 'custom', this.d.typingQuietMs),
      startedAt: performance.now(),
      get lastOutputAt() {
        return session.lastOutputAt;
      },
    };
    this.panes.set(record.id, pane);
    this.d.states?.track(record.id, record.name, launch.profile, session);
    session.onData((data) => this.onData.fire({ agentId: record.id, data }));
    // Death first (~1 ms after the kernel knows): the claims go. The exit follows once the tail has drained.
    session.onDeath(() => void this.died(pane));
    session.onExit((exit) => void this.exited(pane, exit.exitCode, exit.signal ?? null));
  }

  /**
   * A relaunch is a new agent with the same profile, size and command. Of an agent that exited (or one of an
   * earlier run, which has no pane here: its record says how it was started) it takes the place: listed where
   * the old one was, and the old one closed (its claims ended when it exited), so the window shows one tab
   * that lives again rather than a dead tab beside a new one.
   */
  async relaunch(agentId: string): Promise<AgentInfo> {
    const p = this.panes.get(agentId);
    const from = p?.launch ?? this.d.sessions.get(agentId);
    if (!from) throw new Error(`no agent ${agentId}`);
    const next = await this.launch(from.profile as ProfileIdShared, { cols: from.cols, rows: from.rows, command: from.command });
    if (p && p.record.status !== 'exited') return next;
    this.d.registry.moveTo(next.id, agentId);
    await this.close(agentId);
    return this.agents().find((a) => a.id === next.id) ?? next;
  }

  /** The pane was closed: a hard signal. Claims are released first, then the process group is killed. */
  async close(agentId: string): Promise<void> {
    const p = this.panes.get(agentId);
    if (!p) {
      // An agent of an earlier run (no pane in this host): its tab and record go.
      if (!this.d.registry.get(agentId)) return;
      this.d.sessions.forget(agentId);
      this.d.registry.remove(agentId);
      this.fireAgents();
      return;
    }
    await this.agentGone(p, 'pane-closed');
    this.panes.delete(agentId);
    if (!p.session.exit) await p.session.kill();
    p.session.dispose();
    this.clearLocksWhenGone(p);
    // Its config files hold its (now dead) secret; nothing will read them again.
    fs.rmSync(join(this.d.agentFilesDir, agentId), { recursive: true, force: true });
    // Closed by the person: it no longer appears in the agent list, and it cannot be resumed.
    this.d.registry.remove(agentId);
    this.d.sessions.forget(agentId);
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

  /** Whether a process is a person's or runs in an agent pane (which): how the host tells a person's git from
   *  an agent's. */
  callerOf(pid: number | null): Caller {
    const roots = new Map<number, string>();
    for (const p of this.panes.values()) if (p.record.pid !== null) roots.set(p.record.pid, p.record.name);
    for (const [pid, agentId] of this.verifyRoots) roots.set(pid, `${this.nameOf(agentId)} (its verify command)`);
    return callerOf(pid, roots);
  }

  /** The agent whose pane (or verify command) a process runs in: a secret works only from there. */
  paneOf(pid: number | null): Whereabouts<string> {
    const roots = new Map<number, string>();
    for (const p of this.panes.values()) if (p.record.pid !== null && p.record.status !== 'exited') roots.set(p.record.pid, p.record.id);
    for (const [pid, agentId] of this.verifyRoots) roots.set(pid, agentId);
    return whereIs(pid, roots);
  }

  nameOf(agentId: string): string {
    return this.d.registry.get(agentId)?.name ?? agentId;
  }

  /**
   * A verify command runs the task's code, which the agent wrote: its process tree counts as the agent's
   * pane (the person check says so), from its start until `untrackVerify`. `pid` leads its own session.
   */
  trackVerify(pid: number, agentId: string): void {
    this.verifyRoots.set(pid, agentId);
  }

  untrackVerify(pid: number): void {
    this.verifyRoots.delete(pid);
  }

  /**
   * The one way an agent goes: its secret dies (its next call is refused), it shows as exited, nothing more
   * is typed into it, and every claim it holds ends now with the reason — no timer involved.
   */
  private async agentGone(pane: Pane, reason: HardReleaseReason): Promise<void> {
    const id = pane.record.id;
    pane.record.status = 'exited';
    pane.typist.dispose();
    // The old pane of a resumed agent, reporting late: the agent (its secret, its claims) is the new process's.
    if (this.d.registry.get(id) !== pane.record) return;
    this.d.registry.forgetSecret(id);
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
    await this.agentGone(pane, this.goneReason(pane)).catch(() => undefined);
    this.clearLocksWhenGone(pane);
    if (this.panes.get(pane.record.id) === pane) this.fireAgents();
  }

  private async exited(pane: Pane, code: number, signal: number | null): Promise<void> {
    pane.record.exit = { code, signal };
    if (!this.closing && this.panes.get(pane.record.id) === pane) this.d.sessions.exited(pane.record.id, this.d.env);
    // Normally `died` already ended every claim; this catches a session that could not tell death apart
    // from exit, and anything granted to the agent by a person in between. Nothing held: nothing written.
    await this.agentGone(pane, this.goneReason(pane)).catch(() => undefined);
    // A pane the person closed (or a Thread being shut) ends as asked: no "agent exited" notice for it.
    if (this.closing || this.panes.get(pane.record.id) !== pane) return;
    this.onExit.fire({ agentId: pane.record.id, name: pane.record.name, exit: pane.record.exit });
    this.fireAgents();
  }

  /** A watched exit is the process's; a pane lost with its pty host is the agent's, seen gone. */
  private goneReason(pane: Pane): HardReleaseReason {
    return pane.session.lost ? 'agent-exited' : 'process-exited';
  }

  /** Git locks the agent left behind, cleared once its process group is gone (paneLocks.ts). */
  private clearLocksWhenGone(pane: Pane): void {
    clearLocksWhenGone(pane, this.lockClearing());
  }

  /** The same for agents found gone when this host opened (KeptPanes.goneOf): their deaths nobody saw. */
  clearLocksOfGone(gone: readonly GoneAgent[]): void {
    for (const g of gone) clearGoneAgentsLocks({ ...g, name: this.d.registry.get(g.id)?.name ?? g.name }, this.lockClearing());
  }

  private lockClearing(): LockClearing {
    return { clearLocksOf: this.d.clearLocksOf, warn: this.d.warn, closing: () => this.closing, later: (fn, ms) => this.store.timeout(fn, ms) };
  }

  /** The Thread is shutting (its claims already released by the board): no more pushes, timers or typing. */
  stop(): void {
    this.closing = true;
    this.store.dispose();
    for (const p of this.panes.values()) p.typist.dispose();
  }

  /** After stop(), for a board host that leaves its agents running (`serve --keep-agents`): stop hearing the
   *  panes, kill nothing, keep the agents' files (their CLI config holds their secret). */
  leave(): void {
    for (const p of this.panes.values()) p.session.release?.();
    this.panes.clear();
    this.onData.dispose();
    this.onAgents.dispose();
    this.onExit.dispose();
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
