import { failed } from '../../src-shared/board/result.js';
import { windowMethods, type WindowReply } from '../../src-shared/protocol/windowApi.js';
import { callProcedure, Refusal, type Handlers } from '../base/procedureServer.js';
import type { ThreadApi } from './threadApi.js';
import type { ThreadManager } from './threadManager.js';

/**
 * The one router behind every window transport (Electron IPC and serve's WebSocket): validate the request
 * against the shared schema, hand it to its Thread's door (ThreadApi), answer a value or a typed error. It
 * holds no rule of its own: each method is one delegation. `consumer` identifies the window for flow
 * control, so a window's acks pace only what it was sent.
 */
export class WindowRouter {
  constructor(private readonly threads: ThreadManager) {}

  async call(method: unknown, params: unknown, consumer: string): Promise<WindowReply> {
    const r = await callProcedure(windowMethods, this.handlers, method, params, consumer);
    return r.ok ? r : failed({ code: r.error.code, message: r.error.message });
  }

  private thread(key: string): ThreadApi {
    const t = this.threads.thread(key);
    if (!t) throw new Refusal('no-such-thread', `Thread ${key} is not open`);
    return t;
  }

  /**
   * One handler per window method, typed by the method's entry in the shared table: its params are what the
   * schema validated, and it must answer the method's result type.
   */
  private readonly handlers: Handlers<typeof windowMethods, string> = {
    'threads.list': () => this.threads.list(),
    'threads.open': async (p) => (await this.threads.openThread(p.folder)).summary(),
    'thread.snapshot': (p) => this.thread(p.key).snapshot(),
    'board.setGoal': (p) => this.thread(p.key).setGoal(p),
    'board.setSettings': (p) => this.thread(p.key).setSettings(p),
    'task.add': (p) => this.thread(p.key).addTask(p),
    'task.edit': (p) => this.thread(p.key).editTask(p),
    'task.note': (p) => this.thread(p.key).noteTask(p),
    'task.assign': (p) => this.thread(p.key).assignTask(p),
    'task.release': (p) => this.thread(p.key).releaseTask(p),
    'task.approve': (p) => this.thread(p.key).approveTask(p),
    'task.reject': (p) => this.thread(p.key).rejectTask(p),
    'task.block': (p) => this.thread(p.key).blockTask(p),
    'task.unblock': (p) => this.thread(p.key).unblockTask(p),
    'task.setTakers': (p) => this.thread(p.key).setTakers(p),
    'agent.setDispatch': (p) => this.thread(p.key).setAgentDispatch(p),
    'task.reset': (p) => this.thread(p.key).resetTask(p),
    'queue.move': (p) => this.thread(p.key).moveQueued(p),
    'queue.remove': (p) => this.thread(p.key).removeQueued(p),
    'agent.launch': (p) => this.thread(p.key).launchAgent(p),
    'agent.close': (p) => this.thread(p.key).closeAgent(p),
    'agent.relaunch': (p) => this.thread(p.key).relaunchAgent(p),
    'agent.resume': (p, consumer) => this.thread(p.key).resumeAgent(p, consumer),
    'agent.input': (p) => this.thread(p.key).input(p),
    'agent.resize': (p) => this.thread(p.key).resize(p),
    'agent.ack': (p, consumer) => this.thread(p.key).ack(p, consumer),
    'agent.screen': (p, consumer) => this.thread(p.key).screen(p, consumer),
    'agent.detach': (p, consumer) => this.thread(p.key).detach(p, consumer),
    'task.diff': (p) => this.thread(p.key).taskDiff(p),
    'task.details': (p) => this.thread(p.key).taskDetails(p),
    'task.history': (p) => this.thread(p.key).taskHistory(p),
    'board.events': (p) => this.thread(p.key).events(p),
    'worktree.list': (p) => this.thread(p.key).listWorktrees(),
    'worktree.remove': (p) => this.thread(p.key).removeWorktree(p),
    'worktree.others': (p) => this.thread(p.key).otherFolders(),
    'worktree.clear': (p) => this.thread(p.key).clearFolder(p),
    'worktree.restoreSaved': (p) => this.thread(p.key).restoreSaved(p),
    'worktree.deleteSaved': (p) => this.thread(p.key).deleteSaved(p),
    'notice.claim': (p) => this.thread(p.key).claimNotice(p),
    'budget.set': (p) => this.thread(p.key).setBudget(p),
    'cost.thread': (p) => this.thread(p.key).threadCost(),
    'cost.task': (p) => this.thread(p.key).taskCost(p),
    'cost.csv': (p) => this.thread(p.key).costCsv(p),
    // Not the Thread's own door: the Thread is closed and opened again, which only its manager can do.
    'thread.setBoard': (p) => this.threads.setBoard(p),
  };
}
