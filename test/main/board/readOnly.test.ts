import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { readLog } from '../../../src-main/board/journal.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

/**
 * A journal that cannot write: publish only what is durable, turn read-only once, refuse writes with a
 * typed reason. Real file systems fail here: a tiny disk that fills up, and a folder made read-only under
 * the board by a read-only bind mount. Both need mount(2), which root has on this machine kind and CI, so
 * these tests never skip: the small disk is a tmpfs, or where tmpfs cannot be mounted an ext2 image on a
 * loop device; with neither, beforeAll fails saying why. FORKBENCH_TEST_DISK=loop picks the loop device
 * (to check the fallback where tmpfs works).
 */
const mounts: string[] = [];
const dirs: string[] = [];
const images: string[] = [];
let diskKind: 'tmpfs' | 'loop' = 'tmpfs';

function mount(args: string[]): void {
  execFileSync('mount', args, { stdio: 'pipe' });
}

const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0];

/** Mounts a disk of `size` bytes on `dir`, the way beforeAll found to work. */
function mountDisk(dir: string, size: number): void {
  if (diskKind === 'tmpfs') {
    mount(['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
    return;
  }
  const image = `${dir}.img`;
  images.push(image);
  fs.writeFileSync(image, '');
  fs.truncateSync(image, size);
  // 1 KiB blocks, 16 inodes and no reserved blocks: mkfs's defaults cannot even make lost+found in 96 KiB.
  execFileSync('mkfs.ext2', ['-q', '-F', '-b', '1024', '-N', '16', '-m', '0', image], { stdio: 'pipe' });
  mount(['-o', 'loop', image, dir]);
}

beforeAll(() => {
  ensureBuilt();
  const probe = fs.mkdtempSync(join(tmpdir(), 'forkbench-mnt-'));
  const why: string[] = [];
  try {
    const kinds = process.env.FORKBENCH_TEST_DISK === 'loop' ? (['loop'] as const) : (['tmpfs', 'loop'] as const);
    for (const kind of kinds) {
      diskKind = kind;
      try {
        mountDisk(probe, 96 * 1024);
        execFileSync('umount', [probe]);
        return;
      } catch (err) {
        why.push(`${kind}: ${firstLine(err)}`);
      }
    }
    throw new Error(`the read-only board tests need mount(2) (root, as on this machine kind and CI) for a tmpfs or a loop device; neither worked: ${why.join('; ')}`);
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
    for (const image of images.splice(0)) fs.rmSync(image, { force: true });
  }
});

afterEach(() => {
  for (const m of mounts.splice(0).reverse()) execFileSync('umount', ['-l', m]);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  for (const image of images.splice(0)) fs.rmSync(image, { force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-ro-'));
  dirs.push(d);
  return d;
}

/** A disk of `size` bytes (tmpfs, or an ext2 image on a loop device): the board fills it. */
function smallDisk(size: number): string {
  const d = tmp();
  mountDisk(d, size);
  mounts.push(d);
  return d;
}

function record(board: BoardService): { events: BoardEvent[]; readOnly: string[] } {
  const seen = { events: [] as BoardEvent[], readOnly: [] as string[] };
  board.onEvent((e) => seen.events.push(e));
  board.onReadOnly((err) => seen.readOnly.push(err.message));
  return seen;
}

describe('a board whose journal fails', () => {
  it('full disk: the failed write is refused as read-only, nothing undurable is published, later writes are refused, reads go on', async () => {
    const dir = join(smallDisk(96 * 1024), 'board');
    const board = await JournalBoard.open({ dir, threadId: 't', warn: () => undefined });
    const seen = record(board);
    const added = await board.run((e) => e.addTask({ title: 'fill the disk' }));
    expect(added.ok).toBe(true);
    const note = 'x'.repeat(8 * 1024);
    let refused: { code: string; message: string } | null = null;
    let accepted = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      const r = await board.run((e) => e.userNote('T-1', note));
      if (r.ok) accepted++;
      else refused = r.error;
    }
    expect(accepted).toBeGreaterThan(0);
    expect(refused?.code).toBe('read-only');
    expect(refused?.message).toMatch(/read-only: writing its journal failed \(.*ENOSPC/);
    expect(seen.readOnly).toHaveLength(1);
    // Every published event is on disk; the one that failed was never published.
    const onDisk = new Set([...readLog(dir)].map((e) => e.seq));
    expect(seen.events.length).toBeGreaterThan(0);
    for (const e of seen.events) expect(onDisk.has(e.seq)).toBe(true);
    expect(seen.events.filter((e) => e.kind === 'note')).toHaveLength(accepted);
    // Reads show the board as the disk has it: the note whose write failed is not there for an agent to read.
    expect(board.state.tasks.get('T-1')?.notes).toHaveLength(accepted);
    expect([...readLog(dir)].filter((e) => e.kind === 'note')).toHaveLength(accepted);
    // From now on: writes refused at once with the same reason, still one notice; reads work.
    const again = await board.run((e) => e.addTask({ title: 'after' }));
    expect(again).toMatchObject({ ok: false, error: { code: 'read-only' } });
    await expect(board.apply((e) => e.sweep())).rejects.toMatchObject({ code: 'read-only' });
    expect(seen.readOnly).toHaveLength(1);
    expect(board.state.tasks.get('T-1')?.title).toBe('fill the disk');
    expect(board.readOnlyReason).toMatch(/ENOSPC/);
    await board.close();
  });

  it('a folder that turns read-only under the board (new segment at compaction): read-only, published events all on disk', async () => {
    const dir = join(tmp(), 'board');
    const board = await JournalBoard.open({ dir, threadId: 't', compactEvery: 6, warn: () => undefined });
    const seen = record(board);
    expect((await board.run((e) => e.addTask({ title: 'a' }))).ok).toBe(true);
    // From here the folder is read-only: files already open still take writes, new files cannot be made.
    mount(['--bind', dir, dir]);
    mounts.push(dir);
    mount(['-o', 'remount,bind,ro', dir]);
    let refused: { code: string; message: string } | null = null;
    for (let i = 0; i < 20 && !refused; i++) {
      const r = await board.run((e) => e.userNote('T-1', `n${i}`));
      if (!r.ok) refused = r.error;
    }
    expect(refused?.code).toBe('read-only');
    expect(refused?.message).toMatch(/EROFS|read-only file system/i);
    expect(seen.readOnly).toHaveLength(1);
    const onDisk = new Set([...readLog(dir)].map((e) => e.seq));
    for (const e of seen.events) expect(onDisk.has(e.seq)).toBe(true);
    await board.close();
  });

  it('an agent is told read-only in the CLI words, and the window gets one notice', async () => {
    const root = tmp();
    const folder = join(root, 'project');
    fs.mkdirSync(folder);
    const threads = new ThreadManager({ dataRoot: smallDisk(128 * 1024), runtimeRoot: join(root, 'run'), liveness: false, warn: () => undefined, peerJudge: secretsFromTheTestProcess });
    const host = await threads.open(folder);
    try {
      const pushes: string[] = [];
      threads.onPush.event((p) => p.type === 'notify' && pushes.push(p.about));
      await host.board.run((e) => e.addTask({ title: 't' }));
      const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
      // The CLI runs with the agent's secret from the test process, outside its pane: the manager's judge lets it.
      const secret = host.roster.agent(a.id)?.secret as string;
      const cli = (args: string[]) =>
        new Promise<{ code: number; stderr: string }>((resolve) =>
          execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: secret } }, (err, _o, stderr) =>
            resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
          ),
        );
      expect((await cli(['claim', 'T-1'])).code).toBe(0);
      let last = { code: 0, stderr: '' };
      for (let i = 0; i < 100 && last.code === 0; i++) last = await cli(['note', 'T-1', 'y'.repeat(16 * 1024)]);
      expect(last.code).toBe(3);
      expect(last.stderr).toMatch(/forkbench: refused \(read-only\): the board is read-only/);
      expect((await cli(['renew', 'T-1'])).stderr).toMatch(/refused \(read-only\)/);
      expect(pushes).toEqual([`read-only:${host.key}`]);
    } finally {
      await threads.dispose();
    }
  });
});
