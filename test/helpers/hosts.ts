import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ThreadHost } from '../../src-main/thread/threadHost.js';
import { openTestHost } from './testHost.js';
import { ThreadManager } from '../../src-main/window/threadManager.js';
import type { SharedBoardSetting } from '../../src-main/board/openBoard.js';
import type { SandboxSupport } from '../../src-main/sandbox/bwrapProbe.js';
import type { PeerJudgeFactory } from '../../src-main/agents/peerJudge.js';
import type { HostLeaseTiming } from '../../src-main/board/pg/hostLease.js';

/**
 * Thread hosts on fresh folders for a test file, through openTestHost (testHost.ts): `open` makes one (a project
 * folder, a data folder and a runtime folder in one temp root; `env` is what its agents start from), `cleanup`
 * (an afterEach) disposes them all and removes their folders.
 * `defaults.peerJudge` is what every host of the file takes unless `open` is given another: the real judge
 * without it; a file that acts as an agent from the test process passes peerJudges.ts's and says why.
 */
export function hostFixture(prefix: string, defaults: { peerJudge?: PeerJudgeFactory } = {}) {
  const closes: Array<() => Promise<void>> = [];
  return {
    /** `seedBoard` writes the Thread's board folder before the host opens it (a journal from an older version). */
    async open(
      opts: {
        liveness?: boolean;
        typingQuietMs?: number;
        seedBoard?: (boardDir: string, threadKey: string) => void;
        env?: Record<string, string | undefined>;
        /** Who may use an agent's secret: by default the real judge, as Electron and serve have (a secret
         *  works only from its own pane); a test that acts as an agent from the test process passes
         *  peerJudges.ts's secretsFromTheTestProcess and says why. */
        peerJudge?: PeerJudgeFactory;
        /** This host's lease on a shared board (openBoard.ts's hostLeaseOf), for tests that lose hosts. */
        hostLease?: HostLeaseTiming;
        /** A shared board (PostgreSQL) instead of the Thread's journal. */
        sharedBoard?: SharedBoardSetting;
        /** What the host finds of bwrap; by default what this machine has (gitFixture's uncontainedBecause: none). */
        sandboxSupport?: SandboxSupport;
        /** Profiles whose agents run uncontained (`all`: every one), for tests of the uncontained mode. */
        uncontained?: readonly string[];
      } = {},
    ): Promise<ThreadHost> {
      const t = await openTestHost({ prefix, closedBy: 'caller', liveness: opts.liveness, typingQuietMs: opts.typingQuietMs, env: opts.env, peerJudge: opts.peerJudge ?? defaults.peerJudge, hostLease: opts.hostLease, sharedBoard: opts.sharedBoard, sandboxSupport: opts.sandboxSupport, uncontained: opts.uncontained, seedBoard: opts.seedBoard });
      const host = t.host;
      closes.push(t.close);
      return host;
    },
    async cleanup(): Promise<void> {
      for (const close of closes.splice(0)) await close();
    },
  };
}

/**
 * What Electron's main and `serve` run, on fresh folders: `make` gives a ThreadManager (liveness off, for
 * tests that drive time through the board) and a project folder for it to open; `cleanup` (an afterEach)
 * disposes every manager and removes the folders.
 */
export function managerFixture(prefix: string) {
  const managers: ThreadManager[] = [];
  const dirs: string[] = [];
  return {
    make(): { threads: ThreadManager; folder: string } {
      const root = fs.mkdtempSync(join(tmpdir(), `forkbench-${prefix}-`));
      dirs.push(root);
      const folder = join(root, 'project');
      fs.mkdirSync(folder);
      const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
      managers.push(threads);
      return { threads, folder };
    },
    async cleanup(): Promise<void> {
      for (const m of managers.splice(0)) await m.dispose();
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}
