import { claimDataFolder } from '../base/dataFolderClaim.js';
import type { HostLock } from '../base/hostLock.js';
import { SuspendWatch } from '../thread/suspendWatch.js';
import type { ThreadApi } from '../window/threadApi.js';
import type { ThreadHostOptions } from '../thread/threadHost.js';
import { ThreadManager } from '../window/threadManager.js';
import type { BoardMove } from '../window/boardMove.js';
import { lingeringKills } from '../pty/processGroupKiller.js';
import type { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import { HostWindows } from './hostWindows.js';

/** What a host process is told at its start; the rest of ThreadHostOptions reach every Thread it opens. */
export type HostProcessOptions = Omit<ThreadHostOptions, 'folder' | 'ptyHost' | 'warn'> & {
  /** Who holds the data folder, as its lock tells a second host ("forkbench serve", "the Forkbench app"). */
  kind: string;
  /** How the host names itself on its log ("forkbench serve", "Forkbench"). */
  name: string;
  warn: (message: string) => void;
  /** With a board given at start: what to do with a Thread's local board that has tasks (`--move`, boardMove.ts). */
  move?: BoardMove;
};

export type HostProcessClaim = { ok: true; host: HostProcess } | { ok: false; message: string };

/** The steps of a stop that belong to the transport, run at their place in the one order. */
export interface StopSteps {
  /** The windows are told the host stops, before anything ends: their pages show it at once. */
  tellWindows?: () => void;
  /** After the Threads and the pty host are done: the transport closes (serve's port). */
  closeTransport?: () => Promise<void>;
}

/**
 * One host process, as `serve` and Electron's main both run it: the data folder's claim, the link to its pty
 * host, the open Threads, their windows, grace after a sleep, and the stop. The shells keep only their
 * transport (a port, IPC) and their questions to the person (a quit dialog, command-line flags).
 *
 * The order is fixed here: claim the data folder (one host per folder: a second board would split the board
 * and interleave the journal), link the pty host before any Thread opens, then open Threads. A stop runs
 * in the reverse order: the windows hear it, the Threads close (claims end or are kept), the pty host quits
 * or keeps its agents, the transport closes, lingering kills finish, and the claim goes last, so no second
 * host starts on the folder while this one still writes.
 */
export class HostProcess {
  readonly threads: ThreadManager;
  readonly windows: HostWindows;
  private ptyHost: Promise<PtyHostLink | undefined> = Promise.resolve(undefined);
  /** The link once it is up: what a stop that gives up leaves to keep the agents. */
  private linked: PtyHostLink | undefined;
  private sleep: SuspendWatch | null = null;
  private stopping = false;

  private constructor(
    private readonly lock: HostLock,
    private readonly o: HostProcessOptions,
  ) {
    const { kind: _kind, name: _name, move, ...threadOptions } = o;
    this.threads = new ThreadManager(threadOptions, { move });
    this.windows = new HostWindows(this.threads);
  }

  /** Take the data folder for a new host process, or say in one line why not (nothing opened or changed). */
  static claim(o: HostProcessOptions): HostProcessClaim {
    const claim = claimDataFolder(o.dataRoot, o.kind);
    return claim.ok ? { ok: true, host: new HostProcess(claim.lock, o) } : claim;
  }

  /**
   * Run the agents in this pty host (undefined: as this process's children). Linked once, before the first
   * Thread opens; a promise while it starts (Electron asks the person first when it is another version's),
   * which the Threads opening meanwhile wait for.
   */
  usePtyHost(link: PtyHostLink | Promise<PtyHostLink> | undefined): void {
    this.threads.usePtyHost(link);
    this.ptyHost = Promise.resolve(link).then(
      (l) => (this.linked = l),
      () => undefined,
    );
  }

  /** Where the host is reached (serve's origin): recorded in the data folder's lock and each Thread's. */
  setUrl(url: string): void {
    this.threads.hostUrl = url;
    this.lock.setUrl(url);
  }

  openThread(folder: string): Promise<ThreadApi> {
    return this.threads.openThread(folder);
  }

  /** Agents whose processes still run, in every open Thread: what a quit would end. */
  runningAgents(): number {
    return this.threads.openThreads().reduce((n, t) => n + t.runningAgents(), 0);
  }

  /** The machine woke up: live agents' claims get a fresh lease before the liveness check judges them. */
  resumeGrace(): Promise<void> {
    return this.threads.resumeGrace();
  }

  /** Notice sleeps by itself (serve, on Linux; Electron hears powerMonitor's 'resume' and calls resumeGrace). */
  watchSleep(): void {
    this.sleep ??= SuspendWatch.start((ms) => {
      this.o.warn(`${this.o.name}: the machine slept ${Math.round(ms / 1000)} s; live claims get grace`);
      void this.resumeGrace();
    });
  }

  /**
   * The stop, in its one order (see the class). With `keepAgents` the agents keep running in the pty host
   * with their claims, for the next start to take back. Throws when a step fails: the caller decides between
   * waiting longer and giving up (`abandon`).
   */
  async stop(o: { keepAgents: boolean } & StopSteps): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.sleep?.dispose();
    this.sleep = null;
    o.tellWindows?.();
    await this.threads.dispose({ keepAgents: o.keepAgents });
    this.windows.dispose();
    const link = await this.ptyHost;
    const others = (await link?.quit(o.keepAgents)) ?? 0;
    if (others > 0) this.o.warn(`${this.o.name}: ${others} agent(s) of Threads not open here keep running in the pty host (pid ${link?.hostPid})`);
    await o.closeTransport?.();
    // Agents that ran as this process's children (no pty host) get their TERM and KILL before it exits.
    await lingeringKills();
    this.lock.release();
  }

  /**
   * The process leaves without a clean stop (a stop that failed or overran, a start that did not get going):
   * the agents still running stay in the pty host, whose next board host finds them, and the claim goes.
   * Resolves once the kills already begun (agents run as this process's children) have run their course.
   */
  abandon(): Promise<void> {
    try {
      this.linked?.leave();
    } catch {
      /* the link is gone already: the pty host keeps its agents either way */
    }
    this.lock.release();
    return lingeringKills();
  }

  /** A start that did not get going: no Thread stays open, agents kept from before stay with their pty host,
   *  and a pty host this start made (holding nothing) goes. */
  async abandonStart(): Promise<void> {
    await this.threads.dispose({ keepAgents: true });
    this.windows.dispose();
    const link = await this.ptyHost;
    if (link?.started) await link.shutdown();
    else link?.leave();
    this.lock.release();
  }

  /** The pty host's pid, for what the person is told. */
  get ptyHostPid(): number | undefined {
    return this.linked?.hostPid;
  }
}
