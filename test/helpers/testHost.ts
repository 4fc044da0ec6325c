import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { ThreadHost, threadKeyOf, threadDirOf, type ThreadHostOptions } from '../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../src-main/ptyhost/ptyHostLink.js';

/** What a test changes of a host; everything else is what Electron and `serve` give a ThreadHost. */
export interface TestHostOptions extends Partial<Omit<ThreadHostOptions, 'ptyHost'>> {
  /** The folder that holds `project/`, `data/` and `run/`: a new temp folder (removed when the host closes) by
   *  default, unless all three are given; an earlier host's root to open the same Thread again (a restart), kept. */
  root?: string;
  /** Name of the temp root (`forkbench-<prefix>-…`), to tell a file's leftovers apart. */
  prefix?: string;
  /** Agents in a pty host: `true` starts one of this host's own (shut down when it closes), or this link
   *  (the caller's to shut down). Without it the agents are the host's children. */
  ptyHost?: boolean | PtyHostLink;
  /** Writes the Thread's board folder before the host opens it (a journal from an older version). */
  seedBoard?: (boardDir: string, threadKey: string) => void;
  /** `test` (the default): closed when the test that opened it finishes. `caller`: a fixture or a hook that
   *  opened it closes it itself (close()). */
  closedBy?: 'test' | 'caller';
}

export interface TestHost {
  host: ThreadHost;
  root: string;
  folder: string;
  dataRoot: string;
  runtimeRoot: string;
  /** The pty host the agents run in, when `ptyHost` was asked for. */
  link?: PtyHostLink;
  /** Disposes the host (every claim released, every pane killed), shuts down a pty host of its own and removes a
   *  temp root of its own. Safe to call twice, and after leave(). */
  close(): Promise<void>;
  /** The host leaves its agents running (in the pty host, which a pty host of its own leaves too) as a person's
   *  restart does; close() still tidies. */
  leave(): Promise<void>;
}

/**
 * The one way a test opens a ThreadHost: a temp project, data and runtime folder, liveness off (tests drive
 * time through the board), the real peer judge (a secret works only from its own agent's pane) unless the test
 * passes peerJudges.ts's and says why, and disposal when the test ends. Everything ThreadHostOptions has can be
 * given; `folder`, `dataRoot` and `runtimeRoot` default to the root's `project`, `data` and `run`.
 */
export async function openTestHost(o: TestHostOptions = {}): Promise<TestHost> {
  // A temp root only when some folder is left to it: a test that names all three keeps its own.
  const ownRoot = !o.root && !(o.folder && o.dataRoot && o.runtimeRoot);
  const root = o.root ?? (ownRoot ? fs.mkdtempSync(join(tmpdir(), `forkbench-${o.prefix ?? 'host'}-`)) : dirname(o.folder as string));
  const folder = o.folder ?? join(root, 'project');
  const dataRoot = o.dataRoot ?? join(root, 'data');
  const runtimeRoot = o.runtimeRoot ?? join(root, 'run');
  let link: PtyHostLink | undefined;
  let host: ThreadHost | undefined;
  let closed = false;
  const ownLink = o.ptyHost === true;
  const close = async () => {
    if (closed) return;
    closed = true;
    await host?.dispose();
    if (ownLink) await link?.shutdown();
    if (ownRoot) fs.rmSync(root, { recursive: true, force: true });
  };
  if ((o.closedBy ?? 'test') === 'test') {
    try {
      onTestFinished(close);
    } catch {
      throw new Error("openTestHost outside a test: pass closedBy: 'caller' and close() it from the hook or fixture that opened it");
    }
  }
  const { root: _r, prefix: _p, ptyHost, seedBoard, closedBy: _c, ...given } = o;
  try {
    if (!o.folder) fs.mkdirSync(folder, { recursive: true });
    seedBoard?.(threadDirOf(dataRoot, threadKeyOf(folder)), threadKeyOf(folder));
    // A pty host's data lives beside the boards it serves, as Electron's and serve's does.
    // The idle time: long past any test, so the pty host never exits under one on its own.
    link = ptyHost === true ? await PtyHostLink.open(dataRoot, { idleMs: 60_000 }) : ptyHost || undefined;
    host = await ThreadHost.open({ ...given, folder, dataRoot, runtimeRoot, liveness: o.liveness ?? false, ...(link ? { ptyHost: link } : {}) });
  } catch (err) {
    await close();
    throw err;
  }
  const opened = host;
  return {
    host: opened,
    root,
    folder,
    dataRoot,
    runtimeRoot,
    link,
    close,
    async leave() {
      await opened.leave();
      if (ownLink) link?.leave();
    },
  };
}
