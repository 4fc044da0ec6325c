import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { BoardService } from '../board/boardService.js';
import { AgentRegistry } from '../agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../agents/agentSocket.js';
import { LivenessLoop } from '../agents/liveness.js';
import { runtimeDir } from '../agents/runtimeDir.js';
import { findOnPath } from '../base/pathLookup.js';
import { WorktreeManager } from '../git/worktreeManager.js';
import { AgentSessions } from './agentSessions.js';
import { Assignments } from './assignments.js';
import { ClaimWorktrees } from './claimWorktrees.js';
import { ensureCliShim } from './cliShim.js';
import type { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import { Panes, type AdoptedPane } from './panes.js';
import { AgentStates } from './agentStates.js';
import { verifyDone } from './verifyOnDone.js';

export { LockConstants } from './panes.js';
export { TypingConstants } from './assignmentTyping.js';
export { WorktreeConstants } from './claimWorktrees.js';

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
}

/** Stable short key for a folder, so the same folder always opens the same board. */
export function threadKeyOf(folder: string): string {
  return createHash('sha256').update(resolve(folder)).digest('hex').slice(0, 16);
}

/**
 * One open Thread, put together: its board, the git worktrees under its claims, the agents' socket, the
 * agents' panes, the liveness loop, the assignment messages and verify. Electron and `serve` both host
 * exactly this; neither adds behaviour of its own. Each job is a room of its own; this file only wires
 * them, in the order a reader can follow: the board's events go to the worktrees first (a grant gets its
 * folder), then to the windows, then to the panes (who is told what).
 */
export class ThreadHost {
  readonly key: string;
  private disposed = false;
  readonly onBoardEvent = new Emitter<BoardEvent>();
  /** Unsubscribes the board listener; it lives until the board is closed, so the shutdown's own releases
   *  (host-stopped) still reach onBoardEvent. */
  private readonly unsubscribeBoard: () => void;

  private constructor(
    readonly folder: string,
    readonly board: BoardService,
    readonly socket: AgentSocket,
    readonly registry: AgentRegistry,
    readonly worktrees: ClaimWorktrees,
    readonly panes: Panes,
    readonly liveness: LivenessLoop,
    readonly states: AgentStates,
  ) {
    this.key = threadKeyOf(folder);
    const assignments = new Assignments({ board, panes, folder, worktreeOf: (t, token) => worktrees.worktreeOf(t, token) });
    this.unsubscribeBoard = board.onEvent((e) => {
      worktrees.follow(e);
      this.onBoardEvent.fire(e);
      assignments.follow(e);
      if (e.kind === 'grant' || e.kind === 'claim-ended' || e.kind === 'reassign') panes.fireAgents();
      // A new lease or interval takes effect now, not after the old interval runs out.
      if (e.kind === 'settings-set' && !this.disposed) liveness.schedule();
    });
  }

  static async open(opts: ThreadHostOptions): Promise<ThreadHost> {
    const folder = resolve(opts.folder);
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new Error(`${folder} is not a folder`);
    const key = threadKeyOf(folder);
    const boardDir = join(opts.dataRoot, 'threads', key);
    // Before the board: a record file that cannot be read at all stops the open with nothing opened yet.
    const sessions = AgentSessions.open(boardDir, opts.warn);
    // Agents the pty host kept while no board host ran: the live ones keep their claims (grace), the ones
    // that exited meanwhile lose theirs now with the reason, once.
    const ptyHost = await opts.ptyHost;
    const kept = ptyHost ? await ptyHost.panesOf(key) : [];
    const live = kept.filter((k) => !k.listing.dead);
    const liveIds = new Set(live.map((k) => k.listing.meta.agentId));
    const exitedIds = kept.filter((k) => k.listing.dead).map((k) => k.listing.meta.agentId);
    const board = await BoardService.open({
      dir: boardDir,
      threadId: key,
      goal: opts.goal ?? '',
      warn: opts.warn,
      isAgentAlive: (id) => liveIds.has(id),
      exitedAgents: exitedIds,
    });
    for (const k of kept) if (k.listing.dead) k.pty.dispose();
    const rt = runtimeDir(opts.runtimeRoot);
    const registry = new AgentRegistry();
    // The worktrees come before the socket, whose hooks they answer; the socket's path is known before it
    // listens, and the fence hooks only dial it once an agent commits.
    const socketPath = socketPathFor(rt, key);
    const git = await WorktreeManager.open(folder, board.dir, board, socketPath).catch((err: Error) => ({ reason: `git could not be used here: ${err.message}` }));
    const worktrees = new ClaimWorktrees(board, git instanceof WorktreeManager ? git : null, 'reason' in git ? git.reason : '');
    // Panes are made after the states they report to; a state change redraws the agent list.
    let panesRef: Panes | null = null;
    const states = new AgentStates({ board, onChange: () => panesRef?.fireAgents() });
    const panes = new Panes({
      states,
      folder,
      threadKey: key,
      ptys: ptyHost,
      board,
      registry,
      socketPath,
      binDir: ensureCliShim(rt),
      agentFilesDir: join(rt, `agents-${key}`),
      env: opts.env ?? process.env,
      writableRoots: () => worktrees.git?.writableRoots() ?? [],
      clearLocksOf: worktrees.git ? (id) => worktrees.require().folders.clearLocksOf(id) : null,
      typingQuietMs: opts.typingQuietMs,
      warn: opts.warn,
      sessions,
    });
    panesRef = panes;
    let host: ThreadHost | null = null;
    const onDone = (agentId: string, taskId: string) =>
      void verifyDone({ board, worktrees, folder, timeoutMs: opts.verifyTimeoutMs }, agentId, taskId).catch((err: Error) => {
        // A verify that outlives its Thread (closed mid-run) has nowhere to report; anything else is said.
        if (!host?.disposed) opts.warn?.(`forkbench: verify of ${taskId} failed to run: ${err.message}`);
      });
    const records = worktrees.git?.records;
    let socket: AgentSocket;
    try {
      socket = await AgentSocket.listen(
        socketPath,
        registry,
        board,
        {
          afterGrant: (taskId, token) => worktrees.worktreeOf(taskId, token),
          onDone,
          readMove: records ? (taskId, ref, to) => records.readMove(taskId, ref, to) : undefined,
          offRecord: records
            ? (taskId) => void records.repair(taskId).catch((err: Error) => opts.warn?.(`forkbench: could not put ${taskId}'s branch back at its record: ${err.message}`))
            : undefined,
          reportState: (agentId, state, text) => states.report(agentId, state, text),
          agentStates: () => states.views(),
        },
        { perl: findOnPath('perl'), paneOf: (pid) => panes.paneOfProcess(pid) },
      );
    } catch (err) {
      await board.close();
      throw err;
    }
    await worktrees.git?.threadFolder.fence().catch((err: Error) => opts.warn?.(`forkbench: the Thread's folder could not be fenced for agents: ${err.message}`));
    panes.adopt(
      live.map((k): AdoptedPane => ({ session: k.pty, ...k.listing.meta, cols: k.listing.cols, rows: k.listing.rows })),
      kept.filter((k) => k.listing.dead).map((k) => k.listing.meta),
    );
    const liveness = new LivenessLoop({ board, subjects: () => panes.all(), onStatus: () => panes.fireAgents(), warn: opts.warn, states });
    host = new ThreadHost(folder, board, socket, registry, worktrees, panes, liveness, states);
    if (opts.liveness !== false) liveness.schedule();
    return host;
  }

  /** Close the Thread but leave its agents running in the pty host (`serve --keep-agents`): no claim ends
   *  (the next board host gives them grace), no pane is killed, the board is flushed. */
  async leave(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.liveness.stop();
    this.panes.stop();
    this.worktrees.stop();
    this.panes.leave();
    await this.worktrees.close();
    await this.socket.close();
    await this.board.close();
    this.unsubscribeBoard();
    this.onBoardEvent.dispose();
  }

  /** Shut the Thread: every claim released with the reason, every pane killed, the board flushed. */
  async dispose(reason: 'host-stopped' = 'host-stopped'): Promise<void> {
    if (this.disposed) return;
    // First, before any await: a liveness round in flight neither renews nor re-arms, and no typing poll,
    // slow-worktree note or lock retry fires while the board is busy with the releases below.
    this.disposed = true;
    this.liveness.stop();
    this.states.stop();
    this.panes.stop();
    this.worktrees.stop();
    // Every claim ends now with the reason (the board stays open for exactly this write).
    await this.board.apply((e) => e.shutdown(reason)).catch(() => undefined);
    await this.panes.killAll();
    await this.worktrees.close();
    await this.socket.close();
    await this.board.close();
    this.unsubscribeBoard();
    this.onBoardEvent.dispose();
  }
}
