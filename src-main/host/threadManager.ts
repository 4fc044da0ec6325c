import * as fs from 'node:fs';
import { resolve } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { AgentInfo, ThreadSummary, WindowPush } from '../../src-shared/protocol/windowApi.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { RecentThreads } from './recentThreads.js';
import { describeHolder, HostLock } from '../base/hostLock.js';
import { socketPathFor } from '../agents/agentSocket.js';
import { runtimeDir } from '../agents/runtimeDir.js';
import { ThreadHost, threadKeyOf, type ThreadHostOptions } from './threadHost.js';

/**
 * The open Threads of one host process (Electron's main, or `serve`), keyed by folder. It turns each
 * Thread's events into the pushes windows receive.
 */
export class ThreadManager {
  private readonly hosts = new Map<string, ThreadHost>();
  private readonly opening = new Map<string, Promise<ThreadHost>>();
  readonly recent: RecentThreads;
  readonly onPush = new Emitter<WindowPush>();
  private readonly threadLocks = new Map<string, HostLock>();
  /** Where this host is reached (serve's origin), recorded in each Thread's lock for a refused second host. */
  hostUrl: string | null = null;

  constructor(private readonly base: Omit<ThreadHostOptions, 'folder'>) {
    this.recent = new RecentThreads(base.dataRoot, base.warn);
  }

  get(key: string): ThreadHost | undefined {
    return this.hosts.get(key);
  }

  /** The Threads open in this process (no disk read, unlike `list`). */
  openHosts(): ThreadHost[] {
    return [...this.hosts.values()];
  }

  async list(): Promise<ThreadSummary[]> {
    const open = this.openHosts().map((h) => ({ key: h.key, folder: h.folder, goal: h.board.state.goal, open: true }));
    const closed = (await this.recent.list())
      .filter((r) => !this.hosts.has(r.key) && fs.existsSync(r.folder))
      .map((r) => ({ key: r.key, folder: r.folder, goal: r.goal, open: false }));
    return [...open, ...closed];
  }

  async open(folder: string): Promise<ThreadHost> {
    const abs = resolve(folder);
    const key = threadKeyOf(abs);
    const existing = this.hosts.get(key) ?? (await this.opening.get(key));
    if (existing) return existing;
    const p = this.lockThread(key, abs).then((lock) =>
      ThreadHost.open({ ...this.base, folder: abs }).catch((err: unknown) => {
        lock?.release();
        this.threadLocks.delete(key);
        throw err;
      }),
    );
    this.opening.set(key, p);
    try {
      const host = await p;
      this.hosts.set(key, host);
      this.wire(host);
      void this.recent.remember({ key, folder: abs, goal: host.board.state.goal, openedAt: Date.now() });
      return host;
    } finally {
      this.opening.delete(key);
    }
  }

  /**
   * A Thread folder is one host's at a time: its agents' socket path comes from the folder alone, so a host
   * on another data folder would take over (or delete) this host's socket. The lock sits beside the socket.
   */
  private async lockThread(key: string, folder: string): Promise<HostLock | null> {
    if (process.platform === 'win32') return null; // a named pipe in use refuses a second listener by itself
    const path = socketPathFor(runtimeDir(this.base.runtimeRoot), key).replace(/\.sock$/, '.lock');
    const got = HostLock.acquire(path, { kind: `Forkbench host on data folder ${this.base.dataRoot}`, url: this.hostUrl });
    if (!got.ok) throw new Error(`${folder} is open in another Forkbench host: ${describeHolder(got.holder)}; close it there first`);
    this.threadLocks.set(key, got.lock);
    return got.lock;
  }

  private wire(host: ThreadHost): void {
    const key = host.key;
    host.onBoardEvent.event((event: BoardEvent) => {
      this.onPush.fire({ type: 'board-event', key, event });
      if (event.kind === 'goal-set') void this.recent.remember({ key, folder: host.folder, goal: event.goal, openedAt: Date.now() });
    });
    host.notices.onPush.event((p) => this.onPush.fire(p));
    host.panes.onData.event(({ agentId, data }) => this.onPush.fire({ type: 'pane-data', key, agentId, data }));
    host.panes.onAgents.event((agents: AgentInfo[]) => this.onPush.fire({ type: 'agents', key, agents }));
  }

  /** The machine woke up: live agents' claims get a fresh lease before the liveness check judges them. */
  async resumeGrace(): Promise<void> {
    await Promise.all(this.openHosts().map((h) => h.board.resumeGrace((id) => h.panes.isRunning(id))));
  }

  /** Close every Thread: claims are released with `host-stopped`, panes killed, boards flushed. With
   *  `keepAgents` (their panes in a pty host), the agents keep running and keep their claims instead. */
  async dispose(o: { keepAgents?: boolean } = {}): Promise<void> {
    const all = this.openHosts();
    this.hosts.clear();
    await Promise.all(all.map((h) => (o.keepAgents ? h.leave() : h.dispose())));
    for (const lock of this.threadLocks.values()) lock.release();
    this.threadLocks.clear();
    await this.recent.flush();
    this.onPush.dispose();
  }
}
