import Conf from 'conf';

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

export class RecentThreads {
  private readonly conf: Conf<{ recent: RecentThread[] }>;

  constructor(dataRoot: string) {
    this.conf = new Conf<{ recent: RecentThread[] }>({ cwd: dataRoot, configName: 'settings', projectName: 'forkbench', defaults: { recent: [] } });
  }

  list(): RecentThread[] {
    return this.conf.get('recent');
  }

  remember(t: RecentThread): void {
    const rest = this.list().filter((r) => r.key !== t.key);
    this.conf.set('recent', [t, ...rest].slice(0, MAX_RECENT));
  }
}
