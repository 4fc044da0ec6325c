import type { IDisposable } from '../../src-shared/lifecycle/disposableStore.js';
import type { ThreadSummary, WindowPush, WindowReply } from '../../src-shared/protocol/windowApi.js';
import type { ThreadManager } from '../window/threadManager.js';
import { WindowRouter } from '../window/windowRouter.js';

/** One window as the host process knows it, whatever carries it (an Electron BrowserWindow, a WebSocket). */
interface OpenWindow {
  /** Carries a push to the window (the transport frames it). */
  send: (push: WindowPush) => void;
  /** The Threads whose board events, agent lists and notices it hears: those it opened or read a snapshot of. */
  heard: Set<string>;
  /** The one Thread whose pane output it gets and whose panes wait on its acks, or null before it shows one. */
  shown: string | null;
}

/**
 * The windows of the host process, for both transports: which Thread each shows, what it hears, and letting
 * go of them. A window shows one Thread at a time: the one it last read a snapshot of (a page asks for one
 * whenever it shows a Thread), else the first it opened. Pane output goes only to the windows that show its
 * Thread; once a window shows another, the Thread it left sends it no output and none of its panes waits on
 * its acks. A window that goes (closed, crashed, its socket dropped) is let go in every Thread.
 */
export class HostWindows implements IDisposable {
  private readonly open = new Map<string, OpenWindow>();
  private readonly router: WindowRouter;
  private readonly sub: IDisposable;

  constructor(private readonly threads: ThreadManager) {
    this.router = new WindowRouter(threads);
    this.sub = threads.onPush.event((push) => this.route(push));
  }

  /**
   * A window came, known to its transport as `consumer` (its flow-control name). `shows` is the Thread it
   * opens on, when the transport knows it (Electron's window per Thread); otherwise its first request says.
   * Disposing the answer is the window going.
   */
  add(consumer: string, send: (push: WindowPush) => void, shows: string | null = null): IDisposable {
    this.gone(consumer);
    this.open.set(consumer, { send, heard: new Set(shows === null ? [] : [shows]), shown: shows });
    return { dispose: () => this.gone(consumer) };
  }

  /**
   * A window's request. The ones that say which Thread it shows are noted on the way: from its snapshot on,
   * the window hears the Thread's pushes (a few it already has are harmless: the page orders events by sequence).
   */
  async call(method: unknown, params: unknown, consumer: string): Promise<WindowReply> {
    const w = this.open.get(consumer);
    if (w && method === 'thread.snapshot') {
      const key = (params as { key?: unknown } | null | undefined)?.key;
      // Only an open Thread: a window naming others cannot grow what it is sent to.
      if (typeof key === 'string' && this.threads.thread(key)) this.show(consumer, w, key);
    }
    const out = await this.router.call(method, params, consumer);
    if (w && out.ok && method === 'threads.open' && this.open.get(consumer) === w) {
      const opened = (out.value as ThreadSummary).key;
      w.heard.add(opened);
      // A window's first Thread is the one it opens, until it reads a snapshot of another.
      if (w.shown === null) this.show(consumer, w, opened);
    }
    return out;
  }

  /** The window's page is gone but the window stays (a renderer crash, a reload to come): it holds no pane
   *  back, and what it shows is asked again by its next page. */
  lost(consumer: string): void {
    for (const t of this.threads.openThreads()) t.detachEverywhere(consumer);
  }

  /** The window went: let go in every Thread, and send it nothing more. */
  gone(consumer: string): void {
    if (!this.open.delete(consumer)) return;
    this.lost(consumer);
  }

  /** Which Thread each window shows, by consumer: for the host's own checks and tests. */
  shownBy(consumer: string): string | null {
    return this.open.get(consumer)?.shown ?? null;
  }

  dispose(): void {
    this.sub.dispose();
    this.open.clear();
  }

  private show(consumer: string, w: OpenWindow, key: string): void {
    w.heard.add(key);
    if (w.shown !== null && w.shown !== key) this.threads.thread(w.shown)?.detachEverywhere(consumer);
    w.shown = key;
  }

  private route(push: WindowPush): void {
    for (const w of this.open.values()) {
      if (push.type === 'pane-data' ? w.shown === push.key : w.heard.has(push.key)) w.send(push);
    }
  }
}
