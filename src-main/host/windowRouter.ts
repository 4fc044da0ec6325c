import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Result } from '../../src-shared/board/result.js';
import { serializeBoard } from '../../src-shared/board/serialized.js';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { PROFILE_IDS, windowMethods, type ProfileIdShared, type ThreadSnapshot, type WindowError, type WindowMethod } from '../../src-shared/protocol/windowApi.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import { PROFILES } from '../agents/profiles.js';
import { WorktreeError, WorktreeManager } from '../git/worktreeManager.js';
import type { ThreadHost } from './threadHost.js';
import type { ThreadManager } from './threadManager.js';

/** Events a window gets with its snapshot: enough to fill the log panel without reading the whole history. */
const LOG_TAIL = 300;

export type RouteOutcome = { ok: true; result: unknown } | { ok: false; error: WindowError };

/** The profile ids of the agent CLIs are their command names. */
function onPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD').split(';') : [''];
  return (env.PATH ?? '').split(delimiter).some((dir) => dir && exts.some((ext) => existsSync(join(dir, command + ext))));
}

class RouteError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const isMethod = (m: unknown): m is WindowMethod => typeof m === 'string' && Object.hasOwn(windowMethods, m);

/**
 * The one router behind every window transport (Electron IPC and serve's WebSocket): validate the request
 * against the shared schema, run it on the right Thread, answer a value or a typed error. `consumer`
 * identifies the window for flow control, so a window's acks pace only what it was sent.
 */
export class WindowRouter {
  private readonly available = new Map<ProfileIdShared, boolean>();

  constructor(private readonly threads: ThreadManager) {}

  async call(method: unknown, params: unknown, consumer: string): Promise<RouteOutcome> {
    if (!isMethod(method)) return { ok: false, error: { code: 'unknown-method', message: `unknown method '${String(method).slice(0, 64)}'` } };
    const parsed = windowMethods[method].safeParse(params ?? {});
    if (!parsed.success) return { ok: false, error: { code: 'invalid-input', message: firstIssue(parsed.error) } };
    try {
      return { ok: true, result: (await this.dispatch(method, parsed.data as Record<string, unknown>, consumer)) ?? null };
    } catch (err) {
      if (err instanceof RouteError) return { ok: false, error: { code: err.code, message: err.message } };
      if (err instanceof WorktreeError) return { ok: false, error: { code: err.problem, message: err.message } };
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && /^[a-z-]+$/.test(code)) return { ok: false, error: { code, message: (err as Error).message } };
      return { ok: false, error: { code: 'failed', message: (err as Error).message } };
    }
  }

  /** A window went away: it must no longer hold any pane's output back. */
  detachAll(consumer: string): void {
    for (const host of this.threads.openHosts()) host.detachEverywhere(consumer);
  }

  private host(key: string): ThreadHost {
    const h = this.threads.get(key);
    if (!h) throw new RouteError('no-such-thread', `Thread ${key} is not open`);
    return h;
  }

  private async board<T>(key: string, op: (e: LeaseEngine) => Result<T>): Promise<T> {
    const r = await this.host(key).board.run(op);
    if (!r.ok) throw new RouteError(r.error.code, r.error.message);
    return r.value;
  }

  private async dispatch(method: WindowMethod, p: Record<string, unknown>, consumer: string): Promise<unknown> {
    const key = p.key as string;
    const taskId = p.taskId as string;
    const agentId = p.agentId as string;
    switch (method) {
      case 'threads.list':
        return this.threads.list();
      case 'threads.open': {
        const h = await this.threads.open(p.folder as string);
        return { key: h.key, folder: h.folder, goal: h.board.state.goal, open: true };
      }
      case 'thread.snapshot':
        return this.snapshot(this.host(key));
      case 'board.setGoal':
        return this.board(key, (e) => e.setGoal(p.goal));
      case 'board.setSettings':
        return this.board(key, (e) => e.setSettings(p.patch));
      case 'task.add':
        return this.board(key, (e) => e.addTask({ title: p.title, body: p.body, verify: p.verify }));
      case 'task.edit':
        return this.board(key, (e) => e.editTask(taskId, { title: p.title, body: p.body, verify: p.verify }));
      case 'task.note':
        return this.board(key, (e) => e.userNote(taskId, p.text));
      case 'task.assign': {
        if (!this.host(key).isAgentRunning(agentId)) throw new RouteError('no-such-agent', `agent ${agentId} is not running`);
        return this.board(key, (e) => e.assign(taskId, agentId));
      }
      case 'task.release':
        return this.board(key, (e) => e.userRelease(taskId));
      case 'task.approve':
        return this.host(key).approve(taskId);
      case 'task.reject':
        return this.board(key, (e) => e.rejectReview(taskId, p.reason));
      case 'task.block':
        return this.board(key, (e) => e.block(taskId, p.reason));
      case 'task.unblock':
        return this.board(key, (e) => e.unblock(taskId));
      case 'task.reset':
        return this.board(key, (e) => e.reset(taskId));
      case 'agent.launch': {
        const profile = p.profile as ProfileIdShared;
        if (profile === 'custom' && !p.command) throw new RouteError('invalid-input', 'a custom agent needs a command line');
        return this.host(key).launch(profile, { cols: p.cols as number, rows: p.rows as number, command: p.command as string | undefined });
      }
      case 'agent.close':
        return this.host(key).closePane(agentId);
      case 'agent.relaunch':
        return this.host(key).relaunch(agentId);
      case 'agent.input':
        return this.host(key).input(agentId, p.data as string);
      case 'agent.resize':
        return this.host(key).resize(agentId, p.cols as number, p.rows as number);
      case 'agent.ack':
        return this.host(key).ack(agentId, p.chars as number, consumer);
      case 'agent.screen': {
        const h = this.host(key);
        // From now on this window consumes the pane's output and its acks pace the pty. It starts afresh: a
        // reloaded page (same consumer in Electron) will never ack what its previous incarnation was sent.
        h.detach(agentId, consumer);
        h.attach(agentId, consumer);
        return h.screen(agentId);
      }
      case 'agent.detach':
        return this.host(key).detach(agentId, consumer);
      case 'task.diff':
        return this.host(key).gitWorktrees().diff(taskId);
      case 'worktree.list': {
        const wt = this.host(key).worktrees;
        return wt instanceof WorktreeManager ? wt.list() : [];
      }
      case 'worktree.remove':
        return this.host(key).gitWorktrees().remove(taskId, p.force as boolean);
    }
  }

  private snapshot(h: ThreadHost): ThreadSnapshot {
    const b = h.board.state;
    return {
      key: h.key,
      folder: h.folder,
      board: serializeBoard(b),
      boardNow: h.board.clock.now(),
      agents: h.agents(),
      log: h.board.logTail(LOG_TAIL),
      profiles: PROFILE_IDS.map((id) => ({ id, label: PROFILES[id].label, available: this.isAvailable(id) })),
      git: h.isolation(),
    };
  }

  /** Whether a profile's CLI is installed: shell and custom always are. Looked up once per host, by reading
   *  PATH's folders rather than spawning `which` five times on a window's first snapshot. */
  private isAvailable(id: ProfileIdShared): boolean {
    if (id === 'shell' || id === 'custom') return true;
    let known = this.available.get(id);
    if (known === undefined) {
      known = onPath(id);
      this.available.set(id, known);
    }
    return known;
  }
}
