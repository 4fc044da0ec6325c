import type Conf from 'conf';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';

/**
 * Settings, not the board: which folders were opened as Threads, most recent first. `conf` is
 * electron-store's Node core, so the same file format serves `serve` and (through electron-store) Electron.
 */
export interface RecentThread {
  key: string;
  folder: string;
  goal: string;
  openedAt: number;
}

/** A person scans a short list; older Threads are still on disk and open again by folder. */
const MAX_RECENT = 30;

type Store = Conf<{ recent: RecentThread[] }>;

export class RecentThreads {
  private store: Promise<Store> | null = null;
  private readonly writes = new SerialQueue();

  constructor(
    private readonly dataRoot: string,
    private readonly warn: (message: string) => void = console.warn,
  ) {}

  /**
   * `conf` is loaded on first use, not with the host: with its schema validator it is ~90 ms of a ~270 ms
   * start, and `serve` prints its URL before anyone asks for the list.
   */
  private conf(): Promise<Store> {
    this.store ??= import('conf').then(
      ({ default: ConfClass }) => new ConfClass<{ recent: RecentThread[] }>({ cwd: this.dataRoot, configName: 'settings', projectName: 'forkbench', defaults: { recent: [] } }),
    );
    return this.store;
  }

  async list(): Promise<RecentThread[]> {
    await this.writes.idle();
    return (await this.conf()).get('recent');
  }

  /** Writes run one after another, so two Threads opened at once both end up in the list. */
  remember(t: RecentThread): Promise<void> {
    return this.writes.run(async () => {
      try {
        const conf = await this.conf();
        const rest = conf.get('recent').filter((r) => r.key !== t.key);
        conf.set('recent', [t, ...rest].slice(0, MAX_RECENT));
      } catch (err) {
        // A settings file that cannot be written loses the list's order, not any work: say so and go on.
        this.warn(`forkbench: could not save the recent Threads list: ${(err as Error).message}`);
      }
    });
  }

  /** Resolves once every remembered Thread is written. */
  flush(): Promise<void> {
    return this.writes.idle();
  }
}
