import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { IDisposable } from '../../src-shared/lifecycle/disposableStore.js';
import { openThreadBoard, type SharedBoardSetting } from '../board/openBoard.js';
import type { HostLeaseTiming } from '../board/pg/hostLease.js';
import { type BoardService } from '../board/boardService.js';
import { AgentSocket, socketPathFor } from '../agents/agentSocket.js';
import { paneJudge, type PeerJudgeFactory } from '../agents/peerJudge.js';
import { LivenessLoop } from '../agents/liveness.js';
import { runtimeDir } from '../agents/runtimeDir.js';
import { nodeRuntime } from '../base/nodeRuntime.js';
import type { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import { AgentSessions } from '../roster/agentSessions.js';
import { AgentStates } from '../roster/agentStates.js';
import { KeptPanes } from '../roster/keptPanes.js';
import { Roster } from '../roster/roster.js';
import { Assignments } from './assignments.js';
import { ApprovalSeal } from './approvalSeal.js';
import { MergeQueue } from './mergeQueue.js';
import { gitLandingSteps } from './queueLanding.js';
import { ClaimWorktrees } from './claimWorktrees.js';
import type { ParkedSeams } from '../git/parkedWork.js';
import type { ArrivalTiming } from '../git/recordArrival.js';
import { ensureCliShim } from './cliShim.js';
import { ThreadNotices } from './threadNotices.js';
import { verifyOnDone } from './verifyOnDone.js';
import { Dispatcher } from './dispatcher.js';
import { BudgetWatch } from './budgetWatch.js';
import { AgentSandbox } from '../sandbox/agentSandbox.js';
import { sandboxSupport, type SandboxSupport } from '../sandbox/bwrapProbe.js';


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
  /** How long a pane must be quiet before the host types a message (an assignment) into it. */
  typingQuietMs?: number;
  warn?: (message: string) => void;
  /** The environment agents start from; defaults to this process's. */
  env?: Record<string, string | undefined>;
  /** Run the agents in this pty host, so they outlive this board host; without it they are its children.
   *  A promise while it starts (Electron's main opens its windows' plumbing before it is up). */
  ptyHost?: PtyHostLink | Promise<PtyHostLink>;
  /** Who may use an agent's secret on the agents' socket; by default the real judge (peerJudge.ts: only a
   *  process in that agent's pane). Electron and `serve` never pass another. */
  peerJudge?: PeerJudgeFactory;
  /** The Thread's board on PostgreSQL, shared with other hosts; without it, the journal in `dataRoot`. */
  sharedBoard?: SharedBoardSetting;
  /** This host's name on shared boards (`serve --host-name`), refused on a board where another host has it;
   *  by default the machine's name with a short tag of this host's id (pg/hostName.ts). */
  hostName?: string;
  /** This host's lease on a shared board (`serve --host-lease-ms`, openBoard.ts's hostLeaseOf); the default
   *  HostLeaseTimes without it. */
  hostLease?: HostLeaseTiming;
  /** How long a claim waits for another host's push of its record, and the timers of pushes' retries
   *  (recordArrival.ts; shorter in tests). */
  gitRemote?: ArrivalTiming;
  /** Seams of the parked folders' clean-up (issue 47 item 5; tests: a clock for the grace, a kill -9 at a step). */
  parked?: ParkedSeams;
  /** Whether bubblewrap contains agents here; probed once per process when not given (tests pass an answer). */
  sandboxSupport?: SandboxSupport;
  /** Profiles whose agents run uncontained (the person's choice, told the same warning); `all` for every one. */
  uncontained?: readonly string[];
  /** Done on the board once it is open and before anything follows it (a local board copied onto a shared one,
   *  boardMove.ts): its events are the board's from the start for the worktrees, the queue and the pushes. A
   *  failure closes the board again and the open fails with it. */
  carry?: (board: BoardService) => Promise<void>;
}

/** A Thread's folder in the host's data folder: its journal, agents' records and board setting. */
export function threadDirOf(dataRoot: string, key: string): string {
  return join(dataRoot, 'threads', key);
}

/** Stable short key for a folder, so the same folder always opens the same board. */
export function threadKeyOf(folder: string): string {
  return createHash('sha256').update(resolve(folder)).digest('hex').slice(0, 16);
}

/**
 * One open Thread, put together: its board, the git worktrees under its claims, the agents' socket, the
 * agents' roster, the liveness loop, the assignment messages and verify. Electron and `serve` both host
 * exactly this; neither adds behaviour of its own. Each job is a room of its own; this file only wires
 * them, in the order a reader can follow: the board's events go to the worktrees first (a grant gets its
 * folder), then to the windows, then to the roster (who is told what, and the agent list when who holds
 * what changed), then to the liveness loop (a new lease or interval).
 */
export class ThreadHost {
  readonly key: string;
  private disposed = false;
  readonly onBoardEvent = new Emitter<BoardEvent>();
  /** The board listener; it lives until the board is closed, so the shutdown's own releases
   *  (host-stopped) still reach onBoardEvent. */
  private readonly boardSubscription: Disposable;
  /** What the person is told (waiting, finished, lapsed, exited), kept for windows opened later. */
  readonly notices: ThreadNotices;
  private readonly leavingTold: IDisposable | null;
  /** Gives idle agents of this host that take tasks when idle the next ready task (issue 34). */
  readonly dispatcher: Dispatcher;
  /** Tells the person of budgets nearly or wholly spent, and this host's agents working under a spent one (issue 47). */
  private readonly budgets: BudgetWatch;

  private constructor(
    readonly folder: string,
    readonly board: BoardService,
    readonly socket: AgentSocket,
    readonly worktrees: ClaimWorktrees,
    readonly roster: Roster,
    readonly liveness: LivenessLoop,
    readonly states: AgentStates,
    /** How its agents are contained (issue 43): what the window is warned of (ThreadNotices). */
    readonly sandbox: AgentSandbox,
    /** The merge queue's runner (issue 34); null in a Thread without git, where approval has nothing to merge. */
    readonly queue: MergeQueue | null = null,
  ) {
    this.key = threadKeyOf(folder);
    const assignments = new Assignments({ board, roster, folder, worktreeOf: (t, token) => worktrees.worktreeOf(t, token) });
    // Before a task's folder is removed, the panes standing in it are told where to go.
    this.leavingTold = worktrees.git?.folders.beforeRemoval((f) => assignments.tellLeaving(f)) ?? null;
    this.boardSubscription = board.onEvent((e) => {
      worktrees.follow(e);
      this.onBoardEvent.fire(e);
      assignments.follow(e);
      roster.follow(e);
      liveness.follow(e);
    });
    this.notices = new ThreadNotices(this);
    this.budgets = new BudgetWatch({
      key: this.key,
      board,
      raise: (make) => this.notices.raiseNotice(make),
      withdraw: (about) => this.notices.withdrawNotice(about),
      tell: (agentId, text) => roster.relay.tell(agentId, text),
    });
    this.dispatcher = new Dispatcher({
      board,
      agents: () => [...roster.all()].filter((p) => p.agent.alive).map((p) => p.agent.id),
      stateOf: (agentId) => states.info(agentId),
      onState: (fn) => states.onChange.event(({ agentId, next }) => fn(agentId, next)),
    });
  }

  static async open(opts: ThreadHostOptions): Promise<ThreadHost> {
    const folder = resolve(opts.folder);
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new Error(`${folder} is not a folder`);
    const key = threadKeyOf(folder);
    const boardDir = threadDirOf(opts.dataRoot, key);
    // Before the board: a record file that cannot be read at all stops the open with nothing opened yet.
    const sessions = AgentSessions.open(boardDir, opts.warn);
    const ptyHost = await opts.ptyHost;
    const kept = await KeptPanes.read(ptyHost, key);
    // The board asks one question of what the pty host kept: is this holder alive, exited, or unknown.
    const board = await openThreadBoard({ dir: boardDir, folder, dataRoot: opts.dataRoot, threadId: key, goal: opts.goal ?? '', warn: opts.warn, holders: kept, shared: opts.sharedBoard, hostName: opts.hostName, hostLease: opts.hostLease });
    if (opts.carry)
      await opts.carry(board).catch(async (err: unknown) => {
        await board.close();
        throw err;
      });
    const rt = runtimeDir(opts.runtimeRoot);
    const socketPath = socketPathFor(rt, key);
    // Before the roster: an agent's sandbox binds the socket's folder, which the socket's listen makes later.
    fs.mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
    // A clone whose remote is not the board's does not join: the board is closed again, nothing written.
    const worktrees = await ClaimWorktrees.open(folder, board, socketPath, opts.gitRemote, opts.warn, opts.parked).catch(async (err: unknown) => {
      await board.close();
      throw err;
    });
    const states = new AgentStates({ board });
    const binDir = ensureCliShim(rt);
    const git = worktrees.git;
    const support = opts.sandboxSupport ?? (await sandboxSupport());
    const node = nodeRuntime();
    const sandbox = new AgentSandbox(
      support,
      {
        threadFolder: folder,
        threadFolderWritable: !git,
        dataRoot: opts.dataRoot,
        runtimeRoot: rt,
        socketPath,
        binDir,
        cliFolders: [dirname(node.node), node.root],
        hooksDir: git ? join(boardDir, 'hooks') : null,
        gitCommonDir: git?.gitCommonDir() ?? null,
        worktreesRoot: git?.folders.dir ?? null,
        home: (opts.env ?? process.env).HOME,
      },
      // The union of the host's option and the Thread's setting, the setting read at each launch.
      { option: opts.uncontained ?? [], setting: () => board.state.settings.uncontained },
    );
    // Said on the host's own output too; the window is told by a notice (ThreadNotices, once, kept for later windows).
    for (const w of sandbox.warnings()) opts.warn?.(w);
    // The roster is built from the kept panes: the live agents are known (their secrets' digests registered)
    // before the socket listens, since an agent waiting for the board calls the moment it can and must be
    // answered as itself, not as a stranger.
    const roster = new Roster({
      states, folder, threadKey: key, ptys: ptyHost, board, socketPath, sessions, kept, typingQuietMs: opts.typingQuietMs, warn: opts.warn,
      binDir,
      sandbox,
      agentFilesDir: join(rt, `agents-${key}`),
      env: opts.env ?? process.env,
      writableRoots: () => worktrees.git?.writableRoots() ?? [],
      lockFolders: worktrees.lockFolders(),
    });
    // Agents that went while no board host ran (killed inside git, say) left locks no process will finish:
    // noted now, before any agent can work in their folders.
    roster.endFoundGone();
    const hooks = { ...worktrees.agentHooks(opts.warn), ...states.agentHooks(), onDone: verifyOnDone({ board, worktrees, folder, timeoutMs: opts.verifyTimeoutMs, warn: opts.warn, whereabouts: roster.whereabouts, sandbox }) };
    const judge = (opts.peerJudge ?? paneJudge())(roster.whereabouts);
    const socket = await AgentSocket.listen(socketPath, roster, board, hooks, judge).catch(async (err: unknown) => {
      await board.close();
      throw err;
    });
    await worktrees.fenceThreadFolder(opts.warn);
    const liveness = new LivenessLoop({ board, subjects: () => roster.all(), onStatus: () => roster.fireAgents(), warn: opts.warn, states, hostWorksFor: (id) => worktrees.preparingFor(id) });
    const here = board.engine.here;
    // On a board several hosts share, each lands the entries approved on it: their worktrees are in its clone.
    const seal = git ? ApprovalSeal.open(board.dir) : null;
    const queue = git && seal
      ? new MergeQueue(board, gitLandingSteps({ board, worktrees, git, seal, timeoutMs: opts.verifyTimeoutMs, whereabouts: roster.whereabouts, sandbox }), board.clock, (t) => !here || !t.queued?.host || t.queued.host === here.id, opts.warn)
      : null;
    if (queue && seal) worktrees.useQueue(queue, seal);
    const host = new ThreadHost(folder, board, socket, worktrees, roster, liveness, states, sandbox, queue);
    if (opts.liveness !== false) liveness.schedule();
    // After the host follows the board: an entry a stopped host was landing is landed again from the start.
    queue?.start();
    return host;
  }

  /** Close the Thread but leave its agents running in the pty host (`serve --keep-agents`): no claim ends
   *  (the next board host gives them grace), no pane is killed, the board is flushed. */
  leave(): Promise<void> {
    return this.close('leave');
  }

  /** Shut the Thread: every claim released with the reason, every pane killed, the board flushed.
   *  `board-moved`: the Thread is being opened on another board (ThreadManager.setBoard). */
  dispose(reason: 'host-stopped' | 'board-moved' = 'host-stopped'): Promise<void> {
    return this.close(reason);
  }

  /** The one teardown: `leave` keeps the agents and their claims; a reason ends every claim and kills them. */
  private async close(how: 'leave' | 'host-stopped' | 'board-moved'): Promise<void> {
    if (this.disposed) return;
    // First, before any await: a liveness round in flight neither renews nor re-arms, and no typing poll,
    // state timer, slow-worktree note or lock retry fires while the board is busy with what follows.
    this.disposed = true;
    this.dispatcher.dispose();
    this.budgets.dispose();
    this.notices.dispose();
    this.liveness.stop();
    this.states.stop();
    this.roster.stop();
    this.queue?.dispose();
    this.worktrees.stop();
    if (how === 'leave') this.roster.leave();
    else {
      // What each agent holds, before the shutdown ends it: the next run lists the agents with it.
      const held = this.roster.heldByAgents();
      // Every claim ends now with the reason (the board stays open for exactly this write).
      await this.board.apply((e) => e.shutdown(how)).catch(() => undefined);
      await this.roster.killAll(held);
    }
    await this.worktrees.close();
    await this.socket.close();
    await this.board.close();
    this.boardSubscription.dispose();
    this.leavingTold?.dispose();
    this.onBoardEvent.dispose();
  }
}
