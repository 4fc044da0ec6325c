import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import type { BoardStoreView, BoardSwitch, ThreadSummary, WindowParams, WindowPush } from '../../src-shared/protocol/windowApi.js';
import { carryText, type CarryOutcome } from '../../src-shared/board/boardCarry.js';
import type { BoardService } from '../board/boardService.js';
import { BoardMoves, carryOnto, carrySource, localBoard, MOVE_ENV, MOVE_FLAG, tasksText, type BoardMove } from './boardMove.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { RecentThreads } from './recentThreads.js';
import { describeHolder, HostLock } from '../base/hostLock.js';
import { threadSocketName } from '../agents/agentSocket.js';
import { runtimeDir } from '../agents/runtimeDir.js';
import { InstalledProfiles } from './installedProfiles.js';
import { ThreadApi } from './threadApi.js';
import { ThreadHost, threadDirOf, threadKeyOf, type ThreadHostOptions } from '../thread/threadHost.js';
import { Refusal } from '../base/procedureServer.js';
import type { SharedBoardSetting } from '../board/openBoard.js';
import { BOARD_URL_ENV, BoardUrlError, checkBoardName, describeBoardUrl, openCheckedPool, parseBoardUrl, redactUrl } from '../board/pg/connection.js';
import { boardChoice, readBoardSetting, saveBoardSetting, type BoardChoice } from './threadBoardSetting.js';

/**
 * The open Threads of one host process (Electron's main, or `serve`), keyed by folder. It turns each
 * Thread's events into the pushes windows receive.
 */
export class ThreadManager {
  private readonly hosts = new Map<string, ThreadHost>();
  /** Each open Thread's door for windows, beside its host. */
  private readonly apis = new Map<string, ThreadApi>();
  private readonly installed = new InstalledProfiles();
  /** Each Thread's listeners that turn its happenings into pushes: they go once the Threads closed, so the
   *  closing's own events (claims ended host-stopped) still reach the windows. */
  private readonly wiring = new Map<string, DisposableStore>();
  private readonly opening = new Map<string, Promise<ThreadHost>>();
  /** Threads whose board a window is changing (thread.setBoard), from its connection check to the reopen. */
  private readonly switching = new Set<string>();
  readonly recent: RecentThreads;
  readonly onPush = new Emitter<WindowPush>();
  private readonly threadLocks = new Map<string, HostLock>();
  /** Where this host is reached (serve's origin), recorded in each Thread's lock for a refused second host. */
  hostUrl: string | null = null;
  /** What the last open of each Thread copied of its local board (boardMove.ts), for the window that asked. */
  private readonly carried = new Map<string, CarryOutcome>();

  constructor(
    private base: Omit<ThreadHostOptions, 'folder'>,
    /** `move`: with a board given at the host's start, what the person said to do with a local board that has
     *  tasks (`--move`); without it such a Thread does not open, and says so. */
    private readonly o: { move?: BoardMove } = {},
  ) {
    this.recent = new RecentThreads(base.dataRoot, base.warn);
  }

  /** The pty host the Threads opened from now on run their agents in: the host process links it once,
   *  before its first Thread opens (a promise while it starts: a Thread opening meanwhile waits for it). */
  usePtyHost(link: ThreadHostOptions['ptyHost']): void {
    this.base = { ...this.base, ptyHost: link };
  }

  get(key: string): ThreadHost | undefined {
    return this.hosts.get(key);
  }

  /** The Threads open in this process (no disk read, unlike `list`). */
  openHosts(): ThreadHost[] {
    return [...this.hosts.values()];
  }

  /** The open Thread `key` as windows reach it, or undefined when it is not open. */
  thread(key: string): ThreadApi | undefined {
    return this.apis.get(key);
  }

  /** Every open Thread as windows reach it. */
  openThreads(): ThreadApi[] {
    return [...this.apis.values()];
  }

  async list(): Promise<ThreadSummary[]> {
    const open = this.openThreads().map((t) => t.summary());
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
    return this.track(key, this.start(key, abs));
  }

  /** Lock and open the Thread on the board its choice names (the host's, the Thread's own, or the journal). */
  private async start(key: string, abs: string): Promise<{ host: ThreadHost; store: BoardStoreView }> {
    const lock = await this.lockThread(key, abs);
    const dir = threadDirOf(this.base.dataRoot, key);
    const choice = boardChoice(this.base.sharedBoard, dir, this.base.warn);
    try {
      const carry = this.carryFor(key, dir, abs, choice);
      const host = await ThreadHost.open({ ...this.base, folder: abs, sharedBoard: choice.setting, ...(carry ? { carry } : {}) });
      return { host, store: storeView(host, choice) };
    } catch (err) {
      lock?.release();
      this.threadLocks.delete(key);
      throw err;
    }
  }

  /**
   * What opening on a shared board does with the Thread's local board (boardMove.ts): a copy the person chose and
   * that is not known to have landed is made (again: it lands once), once the board is open and before anything
   * follows it. On a board the host was started with, a local board that has tasks and no choice yet stops the
   * open with what to pass (`--move copy|empty`): nothing is changed, and nothing of it is left out unasked.
   */
  private carryFor(key: string, dir: string, folder: string, choice: BoardChoice): ((board: BoardService) => Promise<void>) | undefined {
    const setting = choice.setting;
    if (!setting) return undefined;
    const moves = new BoardMoves(dir, this.base.warn);
    if (choice.fixed && this.o.move) moves.choose(setting, this.o.move, this.o.move === 'copy');
    else if (choice.fixed && !moves.of(setting)) {
      const tasks = localBoard(dir).tasks.size;
      if (tasks > 0) {
        throw new Error(
          `its local board (on this computer) has ${tasksText(tasks)}, and this host was started with a shared board. Say what happens to them: ` +
            `${MOVE_FLAG} copy copies them onto the shared board (once: a task copied before is not copied again), ` +
            `${MOVE_FLAG} empty starts on the shared board as it is and keeps the local board on this computer ` +
            `(the app: ${MOVE_ENV}=copy or ${MOVE_ENV}=empty). Nothing was changed.`,
        );
      }
    }
    if (!moves.of(setting)?.pending) return undefined;
    return async (board) => {
      const outcome = await carryOnto(board, carrySource(localBoard(dir), this.base.dataRoot, folder));
      moves.choose(setting, 'copy', false);
      this.carried.set(key, outcome);
      this.base.warn?.(`forkbench: ${folder}: ${carryText(outcome)}`);
    };
  }

  /** An opening Thread, seen by any other open of its folder meanwhile; registered and wired once it is up. */
  private async track(key: string, opened: Promise<{ host: ThreadHost; store: BoardStoreView }>): Promise<ThreadHost> {
    const p = opened.then(({ host, store }) => {
      const api = new ThreadApi(host, this.installed, store);
      this.hosts.set(key, host);
      this.apis.set(key, api);
      this.wire(host, api);
      void this.recent.remember({ key, folder: host.folder, goal: api.goal, openedAt: Date.now() });
      return host;
    });
    this.opening.set(key, p);
    try {
      return await p;
    } finally {
      if (this.opening.get(key) === p) this.opening.delete(key);
    }
  }

  /**
   * A window sets the Thread's board (`thread.setBoard`): a PostgreSQL URL, or null for the journal. A URL is
   * checked and connected to first; refused (one line, never the URL), nothing changes. Else the setting is
   * kept and the Thread closed (this host's claims end as at any close, its agents with them) and opened again
   * on the new board; if that open fails, the old setting comes back and the Thread reopens on its old board.
   */
  async setBoard(p: WindowParams<'thread.setBoard'>): Promise<BoardSwitch> {
    const host = this.hosts.get(p.key);
    if (!host || this.opening.has(p.key)) throw new Refusal('no-such-thread', `Thread ${p.key} is not open`);
    if (this.base.sharedBoard) {
      throw new Refusal('invalid-input', `this host was started with a board (--board-url-file, --board-url-stdin or ${BOARD_URL_ENV}), which every Thread uses; change it there`);
    }

    // One switch at a time: a second, sent while the first connects, would close the Thread the first reopens.
    if (this.switching.has(p.key)) throw new Refusal('busy', 'the Thread’s board is being changed already: wait for that to finish');
    this.switching.add(p.key);
    try {
      const next = p.url === null ? null : await checkedBoard(p.url, p.name);
      // Leaving a local board that has tasks: the person says what happens to them, or nothing changes (issue 45).
      const leaving = next !== null && host.board.sharedName === null ? host.board.state.tasks.size : 0;
      if (leaving > 0 && p.move === undefined) {
        throw new Refusal('move-needed', `the Thread's local board has ${tasksText(leaving)}: say whether to copy them onto the shared board or to start there empty (the local board is kept); nothing was changed`);
      }
      return await this.switchBoard(p.key, host, next, leaving > 0 ? p.move : undefined);
    } finally {
      this.switching.delete(p.key);
    }
  }

  /**
   * `move`: what happens to the local board's tasks (a move off the journal that has any). Chosen before the
   * Thread leaves its board and kept as pending until the copy landed: the open on the new board makes it
   * (carryFor), and a host killed in between makes it at its next start.
   */
  private async switchBoard(key: string, host: ThreadHost, next: SharedBoardSetting | null, move?: BoardMove): Promise<BoardSwitch> {
    if (this.hosts.get(key) !== host) throw new Refusal('no-such-thread', `Thread ${key} closed meanwhile`);
    const dir = threadDirOf(this.base.dataRoot, key);
    const prev = readBoardSetting(dir, this.base.warn);
    const moves = new BoardMoves(dir, this.base.warn);
    let failure: unknown = null;
    this.carried.delete(key);
    const reopened = (async () => {
      await this.closeThread(key, host, 'board-moved');
      if (next && move) moves.choose(next, move, move === 'copy');
      saveBoardSetting(dir, next);
      try {
        return await this.start(key, host.folder);
      } catch (err) {
        failure = err;
        // The Thread stays where it was: the choice is undone with it, and the next move asks again.
        if (next && move) moves.forget(next);
        saveBoardSetting(dir, prev);
        return this.start(key, host.folder);
      }
    })();
    try {
      await this.track(key, reopened);
    } catch (err) {
      throw new Refusal('board-unavailable', `the Thread could not be opened again: ${oneLine(err)}`);
    } finally {
      this.onPush.fire({ type: 'thread-reopened', key });
    }
    if (failure !== null) throw new Refusal('board-unavailable', `the Thread stays on its board: ${oneLine(failure)}`);
    const api = this.apis.get(key);
    if (!api) throw new Refusal('no-such-thread', `Thread ${key} closed while it opened`);
    const carried = this.carried.get(key) ?? null;
    this.carried.delete(key);
    return { store: api.store, carried };
  }

  /** Close one Thread as the host's stop does (claims end with `reason`, panes killed), its pushes heard to the end. */
  private async closeThread(key: string, host: ThreadHost, reason: 'host-stopped' | 'board-moved' = 'host-stopped'): Promise<void> {
    this.hosts.delete(key);
    this.apis.delete(key);
    await host.dispose(reason);
    this.wiring.get(key)?.dispose();
    this.wiring.delete(key);
    this.threadLocks.get(key)?.release();
    this.threadLocks.delete(key);
  }

  /** Open `folder` (or find it open) and answer its door for windows. */
  async openThread(folder: string): Promise<ThreadApi> {
    const host = await this.open(folder);
    const api = this.apis.get(host.key);
    if (!api) throw new Error(`Thread ${host.key} closed while it opened`);
    return api;
  }

  /**
   * A Thread folder is one host's at a time: its agents' socket path comes from the folder alone, so a host
   * on another data folder would take over (or delete) this host's socket. The lock sits beside the socket.
   */
  private async lockThread(key: string, folder: string): Promise<HostLock | null> {
    if (process.platform === 'win32') return null; // a named pipe in use refuses a second listener by itself
    const path = join(runtimeDir(this.base.runtimeRoot), `${threadSocketName(key)}.lock`);
    const got = HostLock.acquire(path, { kind: `Forkbench host on data folder ${this.base.dataRoot}`, url: this.hostUrl });
    if (!got.ok) throw new Error(`${folder} is open in another Forkbench host: ${describeHolder(got.holder)}; close it there first`);
    this.threadLocks.set(key, got.lock);
    return got.lock;
  }

  private wire(host: ThreadHost, api: ThreadApi): void {
    const wiring = new DisposableStore();
    this.wiring.set(host.key, wiring);
    wiring.add(api.pushes((push) => this.onPush.fire(push)));
    wiring.add(host.onBoardEvent.event((event) => {
      if (event.kind === 'goal-set') void this.recent.remember({ key: host.key, folder: host.folder, goal: event.goal, openedAt: Date.now() });
    }));
  }

  /** The machine woke up: live agents' claims get a fresh lease before the liveness check judges them. */
  async resumeGrace(): Promise<void> {
    await Promise.all(this.openThreads().map((t) => t.resumeGrace()));
  }

  /** Close every Thread: claims are released with `host-stopped`, panes killed, boards flushed. With
   *  `keepAgents` (their panes in a pty host), the agents keep running and keep their claims instead. */
  async dispose(o: { keepAgents?: boolean } = {}): Promise<void> {
    const all = this.openHosts();
    this.hosts.clear();
    this.apis.clear();
    await Promise.all(all.map((h) => (o.keepAgents ? h.leave() : h.dispose())));
    for (const w of this.wiring.values()) w.dispose();
    this.wiring.clear();
    for (const lock of this.threadLocks.values()) lock.release();
    this.threadLocks.clear();
    await this.recent.flush();
    this.onPush.dispose();
  }
}

/** What a window may know of where a Thread's board is: never the URL (it may hold a password). */
function storeView(host: ThreadHost, choice: BoardChoice): BoardStoreView {
  const name = host.board.sharedName;
  if (!choice.setting || name === null) return { kind: 'journal' };
  return { kind: 'postgres', where: describeBoardUrl(choice.setting.url), name, fixed: choice.fixed, host: host.board.engine.here?.name ?? '' };
}

/** A board a window asks for, checked and connected to once (then let go): a refusal says why in one line. */
async function checkedBoard(url: string, name: string | undefined): Promise<SharedBoardSetting> {
  try {
    parseBoardUrl(url);
    if (name !== undefined) checkBoardName(name, 'a board name');
  } catch (err) {
    if (!(err instanceof BoardUrlError)) throw err;
    throw new Refusal('invalid-input', err.message);
  }
  let pool;
  try {
    pool = await openCheckedPool(url, { max: 1 });
  } catch (err) {
    throw new Refusal('board-unavailable', oneLine(err));
  }
  await pool.end().catch(() => undefined);
  return name === undefined ? { url } : { url, name };
}

/** An error as one line with no password in it (the board's own messages have none; this is for any other). */
function oneLine(err: unknown): string {
  return redactUrl(err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
}
