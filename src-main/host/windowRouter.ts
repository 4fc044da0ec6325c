import { failed, type Result } from '../../src-shared/board/result.js';
import { taskDetails, windowBoard, windowLogEvent } from '../../src-shared/board/windowBoard.js';
import type { BoardEvent } from '../../src-shared/board/events.js';
import {
  PROFILE_IDS,
  windowMethods,
  type ProfileIdShared,
  type ThreadSnapshot,
  type WindowReply,
} from '../../src-shared/protocol/windowApi.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import { PROFILES } from '../agents/profiles.js';
import { findOnPath } from '../base/pathLookup.js';
import { callProcedure, Refusal, unwrap, type Handlers } from '../base/procedureServer.js';
import type { ThreadHost } from './threadHost.js';
import type { ThreadManager } from './threadManager.js';

/** Events a window gets with its snapshot: enough to fill the log panel without reading the whole history. */
const LOG_TAIL = 300;
/** A task's history as a window shows it: its latest events, enough for a task reworked many times. */
const TASK_HISTORY_LIMIT = 500;

/** The events about `taskId`, oldest first, without renewals (a live claim renews every ~30 s, and a
 *  history of renewals hides what happened), the newest TASK_HISTORY_LIMIT of them. */
function taskHistory(log: readonly BoardEvent[], taskId: string): BoardEvent[] {
  const mine = log.filter((e) => e.kind !== 'renew' && 'taskId' in e && e.taskId === taskId);
  return mine.slice(-TASK_HISTORY_LIMIT);
}

/**
 * The one router behind every window transport (Electron IPC and serve's WebSocket): validate the request
 * against the shared schema, run it on the right Thread, answer a value or a typed error. `consumer`
 * identifies the window for flow control, so a window's acks pace only what it was sent.
 */
export class WindowRouter {
  private readonly available = new Map<ProfileIdShared, boolean>();

  constructor(private readonly threads: ThreadManager) {}

  async call(method: unknown, params: unknown, consumer: string): Promise<WindowReply> {
    const r = await callProcedure(windowMethods, this.handlers, method, params, consumer);
    return r.ok ? r : failed({ code: r.error.code, message: r.error.message });
  }

  /** A window went away: it must no longer hold any pane's output back. */
  detachAll(consumer: string): void {
    for (const host of this.threads.openHosts()) host.panes.detachEverywhere(consumer);
  }

  private host(key: string): ThreadHost {
    const h = this.threads.get(key);
    if (!h) throw new Refusal('no-such-thread', `Thread ${key} is not open`);
    return h;
  }

  private async board<T>(key: string, op: (e: LeaseEngine) => Result<T>): Promise<T> {
    return unwrap(await this.host(key).board.run(op));
  }

  /**
   * One handler per window method, typed by the method's entry in the shared table: its params are what the
   * schema validated, and it must answer the method's result type.
   */
  private readonly handlers: Handlers<typeof windowMethods, string> = {
    'threads.list': () => this.threads.list(),
    'threads.open': async (p) => {
      const h = await this.threads.open(p.folder);
      return { key: h.key, folder: h.folder, goal: h.board.state.goal, open: true };
    },
    'thread.snapshot': (p) => this.snapshot(this.host(p.key)),
    'board.setGoal': (p) => this.board(p.key, (e) => e.setGoal(p.goal)),
    'board.setSettings': (p) => this.board(p.key, (e) => e.setSettings(p.patch)),
    'task.add': (p) => this.board(p.key, (e) => e.addTask({ title: p.title, body: p.body, verify: p.verify })),
    'task.edit': (p) => this.board(p.key, (e) => e.editTask(p.taskId, { title: p.title, body: p.body, verify: p.verify })),
    'task.note': (p) => this.board(p.key, (e) => e.userNote(p.taskId, p.text)),
    'task.assign': (p) => {
      if (!this.host(p.key).panes.isRunning(p.agentId)) throw new Refusal('no-such-agent', `agent ${p.agentId} is not running`);
      return this.board(p.key, (e) => e.assign(p.taskId, p.agentId));
    },
    'task.release': (p) => this.board(p.key, (e) => e.userRelease(p.taskId)),
    'task.approve': async (p) => {
      await this.host(p.key).worktrees.approve(p.taskId);
      return null;
    },
    'task.reject': (p) => this.board(p.key, (e) => e.rejectReview(p.taskId, p.reason)),
    'task.block': (p) => this.board(p.key, (e) => e.block(p.taskId, p.reason)),
    'task.unblock': (p) => this.board(p.key, (e) => e.unblock(p.taskId)),
    'task.reset': (p) => this.board(p.key, (e) => e.reset(p.taskId)),
    'agent.launch': (p) => {
      if (p.profile === 'custom' && !p.command) throw new Refusal('invalid-input', 'a custom agent needs a command line');
      return this.host(p.key).panes.launch(p.profile, { cols: p.cols, rows: p.rows, command: p.command });
    },
    'agent.close': async (p) => {
      await this.host(p.key).panes.close(p.agentId);
      return null;
    },
    'agent.relaunch': (p) => this.host(p.key).panes.relaunch(p.agentId),
    'agent.resume': async (p, consumer) => {
      const panes = this.host(p.key).panes;
      const a = await panes.resume(p.agentId);
      // The window already shows this agent's terminal (it asks no new screen): it paces the new pty from now on.
      panes.get(a.id)?.session.attach(consumer);
      return a;
    },
    'agent.input': (p) => (this.host(p.key).panes.input(p.agentId, p.data), null),
    'agent.resize': (p) => (this.host(p.key).panes.resize(p.agentId, p.cols, p.rows), null),
    'agent.ack': (p, consumer) => (this.host(p.key).panes.get(p.agentId)?.session.ack(p.chars, consumer), null),
    'agent.screen': (p, consumer) => {
      const panes = this.host(p.key).panes;
      const session = panes.get(p.agentId)?.session;
      // From now on this window consumes the pane's output and its acks pace the pty. It starts afresh: a
      // reloaded page (same consumer in Electron) will never ack what its previous incarnation was sent.
      session?.detach(consumer);
      session?.attach(consumer);
      return panes.screen(p.agentId);
    },
    'agent.detach': (p, consumer) => (this.host(p.key).panes.get(p.agentId)?.session.detach(consumer), null),
    'task.diff': (p) => this.host(p.key).worktrees.require().review.diff(p.taskId),
    'task.details': (p) => {
      const t = this.host(p.key).board.state.tasks.get(p.taskId);
      if (!t) throw new Refusal('no-such-task', `no task ${p.taskId}`);
      return taskDetails(t);
    },
    'task.history': (p) => taskHistory(this.host(p.key).board.taskLog(p.taskId), p.taskId),
    'worktree.list': async (p) => (await this.host(p.key).worktrees.git?.folders.list()) ?? [],
    'worktree.remove': async (p) => {
      await this.host(p.key).worktrees.require().folders.remove(p.taskId, p.force);
      return null;
    },
    'notice.claim': (p) => this.host(p.key).notices.claim(p.id),
  };

  private snapshot(h: ThreadHost): ThreadSnapshot {
    const b = h.board.state;
    return {
      key: h.key,
      folder: h.folder,
      board: windowBoard(b),
      boardNow: h.board.clock.now(),
      agents: h.panes.agents(),
      log: h.board.logTail(LOG_TAIL).map(windowLogEvent),
      profiles: PROFILE_IDS.map((id) => ({ id, label: PROFILES[id].label, available: this.isAvailable(id) })),
      git: h.worktrees.isolation(),
      notices: h.notices.current(),
    };
  }

  /** Whether a profile's CLI is installed: shell and custom always are. Looked up once per host, by reading
   *  PATH's folders rather than spawning `which` five times on a window's first snapshot. */
  private isAvailable(id: ProfileIdShared): boolean {
    if (id === 'shell' || id === 'custom') return true;
    let known = this.available.get(id);
    if (known === undefined) {
      known = findOnPath(id) !== null; // the profile ids of the agent CLIs are their command names
      this.available.set(id, known);
    }
    return known;
  }
}
