import { BOARD_URL_ENV } from '../board/pg/connection.js';
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { changesHolder } from '../../src-shared/board/eventKinds.js';
import { effectiveRenewIntervalMs } from '../../src-shared/board/limits.js';
import { leaseFor } from '../../src-shared/board/leaseEvidence.js';
import type { HardReleaseReason } from '../../src-shared/board/model.js';
import { compareTaskIds } from '../../src-shared/board/reducer.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentInfo, AgentLastRun } from '../../src-shared/protocol/windowApi.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { DEFAULT_TERMINAL_SIZE } from '../../src-shared/terminal/terminalSize.js';
import type { Agent, ExitStatus } from '../agents/agent.js';
import { AgentRegistry } from '../agents/agentRegistry.js';
import type { LivenessSubject } from '../agents/liveness.js';
import { buildLaunch, noticeWayOf, writeProfileFiles } from '../agents/profiles.js';
import { cliScript, nodeRuntime } from '../base/nodeRuntime.js';
import type { BoardService, PeerAgent } from '../board/boardService.js';
import type { PaneSession, PtyFactory } from '../pty/paneSession.js';
import { PtySession } from '../pty/ptySession.js';
import { endedOf, type AgentSessions } from './agentSessions.js';
import { boardIdentity, lastRunOn } from './heldElsewhere.js';
import type { AgentStates } from './agentStates.js';
import type { StoredAgent } from './agentStore.js';
import { PaneTypist } from './assignmentTyping.js';
import { clearOnceGone, type AgentLockFolders, type LockClearing } from './goneAgentLocks.js';
import type { KeptPanes } from './keptPanes.js';
import type { AgentSandbox, Containment } from '../sandbox/agentSandbox.js';
import { AgentUsage } from './agentUsage.js';
import { PaneRelay } from './paneRelay.js';
import { ProcessWhereabouts } from './whereabouts.js';

/** A running (or just ended) agent's terminal in this host: its pty session, how it was launched, and the
 *  typist that gives it the host's messages (typed or shown, as its profile takes them). */
export interface Pane extends LivenessSubject {
  readonly agent: Agent;
  /** The agent's start this pane runs (Agent.run): a pane of an earlier start speaks for nobody. */
  readonly run: number;
  readonly session: PaneSession;
  readonly launch: { profile: ProfileIdShared; command?: string; cols: number; rows: number; name: string; containment?: Containment };
  readonly typist: PaneTypist;
}

/** Panes in this process: a board host that goes takes its agents with it. */
export const localPtys: PtyFactory = { spawn: async (command, args, options) => PtySession.spawn(command, args, options) };

/** A pane the pty host kept through a board host restart, to be taken back. */
export interface AdoptedPane {
  session: PaneSession;
  agentId: string;
  secretDigest: string;
  profile: string;
  name: string;
  command?: string;
  /** What its pane runs in, as the host that started it said (PaneIdentity.containment). */
  containment?: Containment;
  cols: number;
  rows: number;
}

/** An agent of a Roster given no sandbox runs as it is: its tab says so, rather than nothing. */
const NO_SANDBOX: Containment = { by: null, why: 'this host runs its agents without a sandbox' };

export interface RosterDeps {
  folder: string;
  /** The Thread's key, which the pty host keeps with each pane so a restarted host finds its own. */
  threadKey?: string;
  /** Where panes run: this process (the default) or the pty host. */
  ptys?: PtyFactory;
  board: BoardService;
  socketPath: string;
  /** The per-install CLI shim folder, put first on each agent's PATH. */
  binDir: string;
  /** Where each agent's config files (holding its secret) go, one folder per agent. */
  agentFilesDir: string;
  /** The environment agents start from. */
  env: Record<string, string | undefined>;
  /** Folders outside the Thread's folder that agents edit (the worktrees). */
  writableRoots: () => string[];
  /** The task folders' git locks, for the ones a gone agent left (null: the Thread has no worktrees). */
  lockFolders: AgentLockFolders | null;
  typingQuietMs?: number;
  warn?: (message: string) => void;
  /** The agents' records and conversations, kept across processes and host restarts. */
  sessions: AgentSessions;
  /** Each pane's agent state (hooks, terminal signals, screen). */
  states?: AgentStates;
  /** What a pty host kept of this Thread while no board host ran: the agents to take back, and those gone. */
  kept?: KeptPanes;
  /** Each agent's sandbox (issue 43); without it agents run uncontained. */
  sandbox?: AgentSandbox;
  /** How often each agent's usage records are read (issue 47; UsageWatch.pollMs unless set). */
  usagePollMs?: number;
}

/** What an agent held as it ended, and those tasks' titles on the board it was on (and which board: ids are
 *  a board's own, heldElsewhere.ts). */
export interface HeldAtEnd {
  held: string[];
  titles: Record<string, string>;
  board?: string;
}

/**
 * How an agent's end was learned, and what goes with it. Every end goes through `Roster.end`, which does what
 * each kind asks and nothing else:
 * - `seen`: this host, running, saw it go (its process died or exited, its tab was closed, its start failed):
 *   its claims end with `reason`, its record says it exited, its locks are cleared once `pgid` is gone;
 * - `host-stopped`: this host's stop ended it (the board's shutdown already ended its claims): its record says
 *   so, holding what it held before the stop, or that it had exited by itself before the stop reached it;
 * - `found-gone`: it went while no board host ran (its claims ended as the board opened, its record was
 *   written as the host read them back): only the git locks it left in its folders remain to clear.
 */
type Death =
  | {
      how: 'seen';
      reason: HardReleaseReason;
      /** The process group that may still be finishing a git; null when nothing of it can be left. */
      pgid: number | null;
      exit?: ExitStatus;
    }
  | {
      how: 'host-stopped';
      /** What it held before the stop ended every claim (heldByAgents). */
      held: HeldAtEnd;
      /** Its process had ended before the stop reached it: that end is its own, not the stop's. */
      endedBefore: boolean;
      exit: ExitStatus | null;
    }
  | { how: 'found-gone'; id: string; name: string; pgid: number | null };

/**
 * The Thread's agents, each one `Agent` (agents/agent.ts) from its launch until its tab is closed. The roster
 * launches, resumes, relaunches, closes and adopts them, answers who a secret or a process belongs to, and
 * keeps their records on disk true. An agent's death, however it is learned (its process seen to end, its
 * tab closed, the host's stop, found gone when the host opened), goes one way (`end`): its secret dies, its
 * claims end with the reason, its git locks are cleared once its process group is gone, its record says so.
 */
export class Roster {
  private readonly registry = new AgentRegistry();
  private readonly panes = new Map<string, Pane>();
  /** The agents of an earlier run that ended (not kept alive by the pty host): how, and what they held. Each
   *  leaves this list when it is resumed, relaunched or closed. */
  private readonly lastRun = new Map<string, AgentLastRun>();
  private readonly store = new DisposableStore();
  private closing = false;
  /** What goes through the panes (output, keys, sizes, screens, the host's messages): a room of its own. */
  readonly relay: PaneRelay;
  /** Where processes run (which pane, or a person's): a room of its own, over the same panes. */
  readonly whereabouts: ProcessWhereabouts;
  readonly onAgents = new Emitter<AgentInfo[]>();
  readonly onExit = new Emitter<{ agentId: string; name: string; exit: ExitStatus | null }>();
  /** Each live agent's usage reader (issue 47). */
  private readonly usage: AgentUsage;

  constructor(private readonly d: RosterDeps) {
    fs.mkdirSync(d.agentFilesDir, { recursive: true, mode: 0o700 });
    const panes = { get: (id: string) => this.panes.get(id), all: () => this.panes.values() };
    this.relay = new PaneRelay({ panes, states: d.states });
    this.whereabouts = new ProcessWhereabouts({ panes, nameOf: (id) => this.nameOf(id) });
    this.usage = new AgentUsage({ board: d.board, sessions: d.sessions, env: d.env, folder: d.folder, warn: d.warn, pollMs: d.usagePollMs });
    this.store.add(this.usage);
    // The agents of earlier runs come back as exited tabs (their names' numbers are counted on from); those
    // the pty host kept are taken back at once, before anyone can call as them.
    const alive = (id: string) => d.kept?.isLive(id) ?? false;
    for (const a of d.sessions.restoreInto(this.registry, performance.now(), alive, (id) => d.kept?.endOf(id) ?? null)) {
      if (!alive(a.id)) this.lastRun.set(a.id, lastRunOn(endedOf(a), d.board));
    }
    if (d.kept) this.adopt(d.kept.livePanes(), d.kept.goneNames());
    // A state change (working, waiting for you, ...) redraws the agent list.
    if (d.states) this.store.add(d.states.onChange.event(() => this.fireAgents()));
    const shared = d.board.membership;
    if (shared) {
      // Other hosts' agents on a shared board are listed too: they come and go with their hosts.
      this.store.add(shared.onPeers(() => this.fireAgents()));
      // An agent that ended is no longer listed by other hosts' windows.
      this.store.add(this.onExit.event(({ agentId }) => shared.agentGone(agentId)));
    }
  }

  get(agentId: string): Pane | undefined {
    return this.panes.get(agentId);
  }

  all(): Iterable<Pane> {
    return this.panes.values();
  }

  /** The agent a secret belongs to, if it is alive. */
  authenticate(secret: unknown): Agent | null {
    return this.registry.authenticate(secret);
  }

  /** The agent a dead secret belonged to (its pane closed, it exited), or null. */
  deadSecretOf(secret: unknown): string | null {
    return this.registry.deadSecretOf(secret);
  }

  agent(agentId: string): Agent | undefined {
    return this.registry.get(agentId);
  }

  agents(): AgentInfo[] {
    const containmentOf = (id: string) => this.panes.get(id)?.launch.containment;
    const own: AgentInfo[] = this.registry.all().map((a) => ({ a, c: a.condition })).map(({ a, c }) => ({
      id: a.id,
      name: a.name,
      profile: a.profile,
      // Its life and its activity, read together from the agent that owns both.
      status: c.life,
      pid: a.pid,
      exit: a.exit,
      // In display order: the window draws this list as it comes, and computes no claims of its own.
      claims: this.d.board.engine.claimsOf(a.id).sort(compareTaskIds),
      resumable: a.status === 'exited' && this.d.sessions.resumable(a.id),
      state: c.activity,
      // What its pane runs in, while it has one here (an agent of an earlier run has none until started again).
      ...(containmentOf(a.id) ? { containment: containmentOf(a.id) } : {}),
      ...(a.status === 'exited' && this.lastRun.has(a.id) ? { lastRun: this.lastRun.get(a.id) } : {}),
    }));
    const elsewhere: AgentInfo[] = this.peers().map((p) => ({
      id: p.id,
      name: p.name,
      profile: p.profile,
      status: 'running' as const,
      pid: null,
      exit: null,
      claims: this.d.board.engine.claimsOf(p.id).sort(compareTaskIds),
      host: p.host,
    }));
    return own.concat(elsewhere);
  }

  /** Agents other hosts of a shared board run (none on a board one host owns). */
  private peers(): readonly PeerAgent[] {
    return this.d.board.membership?.peers() ?? [];
  }

  /** An agent another host of a shared board runs, listed here: a person may give it a task. */
  isPeer(agentId: string): boolean {
    return this.peers().some((p) => p.id === agentId);
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
    return this.registry.get(agentId)?.alive ?? false;
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
    const agent = this.registry.create(profile, o.name ?? `${profile} ${n}`, performance.now(), n);
    // Before it can claim: on a shared board, its claims are this host's to vouch for.
    d.board.membership?.hostAgent(agent.id, { name: agent.name, profile });
    const stored: StoredAgent = { id: agent.id, profile, name: agent.name, cwd: d.folder, sessionId: null, state: 'running', startedAt: Date.now(), cols, rows };
    if (o.command) stored.command = o.command;
    return this.start(agent, stored, null, true);
  }

  /**
   * Starts the agent's CLI again on its own conversation, after its process is gone: the same agent (id,
   * name) with a new process and a new secret. The claims it held ended with its old process; it claims
   * again through the board as any agent does (a new grant, a new token).
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
    const agent = this.registry.revive(agentId, performance.now());
    this.lastRun.delete(agentId);
    d.board.membership?.hostAgent(agent.id, { name: agent.name, profile: stored.profile });
    return this.start(agent, { ...stored, cols: old?.launch.cols ?? stored.cols, rows: old?.launch.rows ?? stored.rows }, sessionId, false);
  }

  private async start(agent: Agent, stored: StoredAgent, resumeId: string | null, fresh: boolean): Promise<AgentInfo> {
    const { d } = this;
    const { profile, cols, rows } = stored as StoredAgent & { profile: ProfileIdShared };
    const command = stored.command;
    const filesDir = join(d.agentFilesDir, agent.id);
    fs.mkdirSync(filesDir, { recursive: true, mode: 0o700 });
    let spec: ReturnType<typeof buildLaunch>;
    try {
      spec = buildLaunch(
        profile,
        {
          threadDir: d.folder,
          agentDir: filesDir,
          socketPath: d.socketPath,
          agentId: agent.id,
          agentToken: agent.secret,
          cliPath: cliScript(),
          nodePath: nodeRuntime().node,
          binDir: d.binDir,
          // What its instructions say of its lease: its profile's when the Thread sets one (leaseEvidence.ts).
          leaseMs: leaseFor(d.board.state.settings, agent.id),
          renewMs: effectiveRenewIntervalMs({ ...d.board.state.settings, leaseMs: leaseFor(d.board.state.settings, agent.id) }),
          baseEnv: d.env,
          writableRoots: d.writableRoots(),
          stateDir: d.sessions.stateDirOf(agent.id),
          contained: d.sandbox?.contains(profile) ?? false,
        },
        // A custom command line is run by the shell, so quoting and pipes work as the user typed them.
        command ? { command: '/bin/sh', args: ['-c', command] } : undefined,
      );
      spec = d.sessions.plan(stored, spec, { ...d.env, ...spec.env }, resumeId);
      await writeProfileFiles(spec.files, spec.links, spec.aliases);
    } catch (err) {
      if (fresh) {
        this.registry.remove(agent.id);
        d.sessions.forget(agent.id);
        fs.rmSync(filesDir, { recursive: true, force: true });
      } else {
        // A resume that could not start leaves the agent as it was: exited, its conversation still there.
        await this.end(agent, null, { how: 'seen', reason: 'process-exited', pgid: null });
      }
      throw err;
    }
    // The plan's env carries the agent's identity (every profile builds it with forkbenchEnv).
    const env: Record<string, string | undefined> = { ...d.env, ...spec.env };
    // The shared board's URL may hold a password, and an agent reaches the board only through its host.
    delete env[BOARD_URL_ENV];
    // Its sandbox, when this host contains agents: what the plan starts runs inside bwrap.
    const run = d.sandbox?.wrap(spec.command, spec.args, { agentId: agent.id, profile, filesDir, stateDir: d.sessions.stateDirOf(agent.id), env, commandLine: command }) ?? { command: spec.command, args: spec.args, env: {}, containment: NO_SANDBOX };
    Object.assign(env, run.env);
    // Kept with the pane, in the pty host too: its tab says what it was started in, after a host restart as well.
    const { containment } = run;
    let session: PaneSession;
    try {
      session = await (d.ptys ?? localPtys).spawn(
        run.command,
        run.args,
        { cwd: d.folder, env, cols, rows, contained: containment.by !== null },
        { threadKey: d.threadKey ?? '', agentId: agent.id, secretDigest: agent.secretDigest, socketPath: d.socketPath, profile, name: agent.name, command, containment },
      );
    } catch (err) {
      // Not found, or not executable: the shell's own "command not found" status.
      await this.end(agent, null, { how: 'seen', reason: 'process-exited', pgid: null, exit: { code: 127, signal: null } });
      throw new Error(`could not start ${spec.command}: ${(err as Error).message}`);
    }
    agent.started(session.pid);
    this.wire(agent, session, { profile, command, cols, rows, name: agent.name, containment });
    this.fireAgents();
    return this.agents().find((a) => a.id === agent.id) as AgentInfo;
  }

  /**
   * Take back the panes a pty host kept while this board host was down: each is the same agent (id, secret's
   * digest, and the socket path its environment already names), so its next board call is accepted.
   */
  private adopt(found: AdoptedPane[], gone: Array<{ profile: string; name: string }>): void {
    // Names keep counting from the highest one used, the gone agents' too: after `shell 2` comes `shell 3`.
    this.d.sessions.numbers.sawAll([...found, ...gone]);
    for (const f of found) {
      const agent = this.registry.adopt({ id: f.agentId, name: f.name, profile: f.profile, secretDigest: f.secretDigest, pid: f.session.pid }, performance.now());
      this.d.board.membership?.hostAgent(agent.id, { name: agent.name, profile: f.profile });
      this.wire(agent, f.session, { profile: f.profile as ProfileIdShared, command: f.command, cols: f.cols, rows: f.rows, name: f.name, containment: f.containment }, { adopted: true });
    }
  }

  private wire(agent: Agent, session: PaneSession, launch: Pane['launch'], o: { adopted?: boolean } = {}): void {
    const pane: Pane = {
      agent,
      run: agent.run,
      session,
      launch,
      typist: new PaneTypist(session, noticeWayOf(launch.profile), this.d.typingQuietMs),
      startedAt: performance.now(),
      get lastOutputAt() {
        return session.lastOutputAt;
      },
    };
    this.panes.set(agent.id, pane);
    if (this.d.states) {
      this.d.states.track(agent.id, agent.name, launch.profile, session, o);
      agent.readsActivity(this.d.states.portOf(agent.id));
    }
    this.usage.watch(agent.id, launch.profile);
    this.relay.relay(pane);
    // Death first (~1 ms after the kernel knows): the claims go. The exit follows once the tail has drained.
    session.onDeath(() => void this.died(pane));
    session.onExit((exit) => void this.exited(pane, { code: exit.exitCode, signal: exit.signal ?? null }));
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
    // An agent of the last run comes back under its own name: the person sees the agent they had, started anew.
    const name = this.lastRun.has(agentId) ? this.registry.get(agentId)?.name : undefined;
    const launch = () => this.launch(from.profile as ProfileIdShared, { cols: from.cols, rows: from.rows, command: from.command, name });
    if (p?.agent.alive) return launch();
    // The old agent's board write first: it is the one step that can be refused (a shared board's database
    // down), and a refused relaunch must leave nothing done. Launched first, a refusal left the new agent
    // running beside the dead tab, and a person who tried again got two (issue 45).
    const old = this.registry.get(agentId);
    if (old && p) await this.end(old, p, { how: 'seen', reason: 'pane-closed', pgid: old.pid });
    const next = await launch();
    this.registry.moveTo(next.id, agentId);
    await this.discard(agentId, p);
    return this.agents().find((a) => a.id === next.id) ?? next;
  }

  /** The pane was closed: a hard signal. Claims are released first, then the process group is killed. */
  async close(agentId: string): Promise<void> {
    const agent = this.registry.get(agentId);
    if (!agent) return;
    const p = this.panes.get(agentId);
    if (p && agent.alive && !this.closing) {
      // The board write first, while nothing of the agent has ended: it is the step a shared board's outage
      // refuses, and a refused close leaves the agent as it was (running, its secret good, its tab there).
      // Ended first, a refusal left a process running whose secret was dead and whose tab said it had exited.
      await this.d.board.apply((e) => e.releaseAllHeldBy(agentId, 'pane-closed'));
      // Its end writes again, for a claim granted in between; should the board fail just now, the close still
      // goes on (it was taken): that claim ends with the write its exit makes, or when its lease lapses.
      await this.end(agent, p, { how: 'seen', reason: 'pane-closed', pgid: agent.pid }).catch((err: Error) => this.d.warn?.(`forkbench: ${agent.name} closed, but its claims were not released again: ${err.message}`));
    } else if (p) await this.end(agent, p, { how: 'seen', reason: 'pane-closed', pgid: agent.pid });
    await this.discard(agentId, p);
  }

  /** The rest of a close, once its board write is done: nothing here writes to the board, so nothing here is
   *  refused. The pane, its process and files, the tab and the record go. */
  private async discard(agentId: string, p: Pane | undefined): Promise<void> {
    if (p) {
      this.panes.delete(agentId);
      if (!p.session.exit) await p.session.kill();
      p.session.dispose();
      // Its config files hold its (now dead) secret; nothing will read them again.
      fs.rmSync(join(this.d.agentFilesDir, agentId), { recursive: true, force: true });
    }
    // Closed by the person: it no longer appears in the agent list, and it cannot be resumed. (An agent of an
    // earlier run has no pane here: only its tab and record go.)
    this.registry.remove(agentId);
    this.lastRun.delete(agentId);
    this.d.sessions.forget(agentId);
    this.d.states?.forget(agentId);
    this.fireAgents();
  }

  /** An agent's name; another host's (on a shared board) with that host's, both hosts may have a "shell 1".
   *  A peer's name and host are read from the board, written by another machine: shown, never obeyed. */
  nameOf(agentId: string): string {
    const own = this.registry.get(agentId)?.name;
    if (own !== undefined) return own;
    const peer = this.peers().find((p) => p.id === agentId);
    return peer ? `${showControls(peer.name, 'none')} on ${showControls(peer.host, 'none')}` : agentId;
  }

  /**
   * Agents that went while no board host ran (killed inside git, say): their claims ended as the board opened
   * (KeptPanes answered its question), and this is the rest of their death. Called once the Thread's folders
   * are known and before any agent can call, so no other agent works in their folders yet.
   */
  endFoundGone(): void {
    // Nothing of a found-gone end waits (end's first await is past its branch): every lock is noted now.
    for (const g of this.d.kept?.goneOf(this.d.lockFolders?.agentsWithFolders() ?? []) ?? []) void this.end(this.registry.get(g.id) ?? null, null, { how: 'found-gone', ...g });
    this.d.kept?.dropExited();
  }

  /**
   * The one way an agent goes, however its end was learned (Death says which, and what each asks). The locks
   * in its folders are noted first, while no one else can work there; then it ends (its secret dies: its next
   * call is refused), nothing more is typed into it, its record says so, and every claim it holds ends now
   * with the reason — no timer involved; its locks are cleared once its process group is gone. Said twice
   * (its death, then its exit status), the second time only catches a claim a person granted in between.
   */
  private async end(agent: Agent | null, pane: Pane | null, death: Death): Promise<void> {
    if (death.how === 'found-gone') {
      // Its claims and record are dealt with already; its locks are noted before any agent can work there.
      const locks = this.d.lockFolders?.locksOf(death.id) ?? [];
      clearOnceGone({ name: agent?.name ?? death.name, pgid: death.pgid, locks }, this.lockClearing());
      return;
    }
    if (!agent) return;
    pane?.typist.dispose();
    // The old pane of a resumed agent, reporting late: the agent (its secret, its claims) is the new process's.
    if (pane && pane.run !== agent.run) return;
    if (death.how === 'host-stopped') {
      agent.ended();
      this.registry.forgetSecret(agent.id);
      const { held, endedBefore, exit } = death;
      this.d.sessions.exited(agent.id, this.d.env, endedBefore ? { how: 'exited', ...held, exit: exit ?? agent.exit } : { how: 'host-stopped', ...held, exit: null });
      return;
    }
    // Noted once, by the word that ends it: its exit status that follows finds the same folders.
    const locks = this.closing || !agent.alive ? [] : (this.d.lockFolders?.locksOf(agent.id) ?? []);
    const first = agent.ended(death.exit);
    this.registry.forgetSecret(agent.id);
    if (first) this.d.states?.gone(agent.id);
    // A Thread shutting down (or leaving its agents) writes nothing more of them here: the stop's own end
    // (host-stopped) writes what the next host will find.
    if ((first || death.exit) && !this.closing && this.registry.get(agent.id) === agent) {
      this.d.sessions.exited(agent.id, this.d.env, { how: 'exited', ...this.heldBy(agent.id), exit: agent.exit });
    }
    try {
      if (!this.closing) await this.d.board.apply((e) => e.releaseAllHeldBy(agent.id, death.reason));
    } finally {
      // Its locks are its process group's, whatever the board says: a refused write leaves them no less stale.
      clearOnceGone({ name: agent.name, pgid: death.pgid, locks }, this.lockClearing());
    }
  }

  /**
   * The agent's process is dead (the pane's child-exit watcher knew within ~1 ms): the hard signal, taken
   * while the pane is still reading the output tail; `exited` follows with the exit status. Not waiting for
   * that tail is what makes kill -9 -> claim-ended a few ms instead of the 20+ ms of the session's drain.
   * The tab says so now too: a person pressing Ctrl-C under a flood should not wait for the tail.
   */
  private async died(pane: Pane): Promise<void> {
    await this.end(pane.agent, pane, { how: 'seen', reason: this.goneReason(pane), pgid: pane.agent.pid }).catch(() => undefined);
    // Its last turns, written as it ended, attributed by their time (to the claims just ended, if spent under them).
    if (pane.run === pane.agent.run && !this.closing) void this.usage.finish(pane.agent.id);
    if (this.panes.get(pane.agent.id) === pane) this.fireAgents();
  }

  private async exited(pane: Pane, exit: ExitStatus): Promise<void> {
    // Normally `died` already ended every claim; this catches a session that could not tell death apart
    // from exit, and anything granted to the agent by a person in between. Nothing held: nothing written.
    await this.end(pane.agent, pane, { how: 'seen', reason: this.goneReason(pane), pgid: pane.agent.pid, exit }).catch(() => undefined);
    // A pane the person closed (or a Thread being shut) ends as asked: no "agent exited" notice for it.
    if (this.closing || this.panes.get(pane.agent.id) !== pane) return;
    this.onExit.fire({ agentId: pane.agent.id, name: pane.agent.name, exit: pane.agent.exit });
    this.fireAgents();
  }

  /** A watched exit is the process's; a pane lost with its pty host is the agent's, seen gone. */
  private goneReason(pane: Pane): HardReleaseReason {
    return pane.session.lost ? 'agent-exited' : 'process-exited';
  }

  private lockClearing(): LockClearing {
    return { folders: this.d.lockFolders, warn: this.d.warn, closing: () => this.closing, later: (fn, ms) => this.store.timeout(fn, ms) };
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
    this.disposeEvents();
  }

  /** What an agent holds now, and those tasks' titles on this board: what its record keeps when it ends, so
   *  the next run names them as they were here (a board switched since may give an id to another task). */
  private heldBy(agentId: string): HeldAtEnd {
    const held = this.d.board.engine.claimsOf(agentId).sort(compareTaskIds);
    const titles: Record<string, string> = {};
    for (const id of held) {
      const title = this.d.board.state.tasks.get(id)?.title;
      if (title !== undefined) titles[id] = title;
    }
    return { held, titles, board: boardIdentity(this.d.board) };
  }

  /** What each of this host's agents holds now: taken before a stop ends every claim, so the records of the
   *  agents it ends can say what they held (killAll). */
  heldByAgents(): Map<string, HeldAtEnd> {
    return new Map(this.registry.all().map((a) => [a.id, this.heldBy(a.id)]));
  }

  /**
   * After stop(): every pane's process group killed and its session disposed, and their records say so: ended
   * by the host's stop, holding what `held` (heldByAgents, before the claims ended) says. An agent whose
   * process had ended before the stop reached it (killed, or exited by itself, while the host was running or
   * as it stopped) was not ended by the stop: its record keeps that cause, with its own exit status (issue
   * 44: an agent killed before the stop was listed as ended by it).
   */
  async killAll(held: ReadonlyMap<string, HeldAtEnd> = new Map()): Promise<void> {
    await Promise.all(
      [...this.panes.values()].map(async (p) => {
        // Read before anything here kills it: its death may already be known (the agent ended) or only its
        // exit (the session's), and either is its own, not the stop's.
        const endedBefore = !p.agent.alive || p.session.exit !== undefined;
        // Of one whose death is known but not yet its status, this waits for that status (no signal is sent
        // to a process that is gone).
        if (!p.session.exit) await p.session.kill().catch(() => undefined);
        const exit = p.session.exit ? { code: p.session.exit.exitCode, signal: p.session.exit.signal ?? null } : null;
        p.session.dispose();
        await this.end(p.agent, p, { how: 'host-stopped', held: held.get(p.agent.id) ?? { held: [], titles: {} }, endedBefore, exit });
      }),
    );
    this.panes.clear();
    fs.rmSync(this.d.agentFilesDir, { recursive: true, force: true });
    this.disposeEvents();
  }

  private disposeEvents(): void {
    this.relay.dispose();
    this.onAgents.dispose();
    this.onExit.dispose();
    for (const a of this.registry.all()) a.dispose();
  }
}
