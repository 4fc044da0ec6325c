/**
 * A host killed -9 in the middle of a parked folder's clean-up (issue 47 item 5): between any two steps, and
 * inside one of its git processes. What it leaves is the folder, or the saved ref with the folder's work, never
 * neither; the next start finishes or redoes the clean-up, and then the work is under refs/forkbench/parked/,
 * checked file by file against what the folder held.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import type { ParkedSeams } from '../../../src-main/git/parkedWork.js';
import { parkedRef } from '../../../src-shared/git/taskBranch.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { filesOf } from '../../helpers/parkedChaos.js';
import { gitSync, idleAgent, makeRepo } from '../../helpers/gitFixture.js';
import { openTestHost } from '../../helpers/testHost.js';

const DRIVER = join(import.meta.dirname, '..', '..', 'helpers', 'parkedCleanupDriver.mjs');
/** The shortest grace a Thread may have: the killed host's clean-up starts a second after it opens. */
const GRACE_MS = 1_000;
/** Untracked files in the folder: enough that `git add` of them takes a while, so a kill lands inside git. */
const MANY_FILES = 3_000;

const hosts: ThreadHost[] = [];
const children: ChildProcess[] = [];
const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) process.kill(-(c.pid as number), 'SIGKILL');
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function openThread(root: string, folder: string, parked?: ParkedSeams): Promise<ThreadHost> {
  const { host: h } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, ...(parked ? { parked } : {}) });
  hosts.push(h);
  return h;
}

async function close(h: ThreadHost): Promise<void> {
  await h.dispose();
  hosts.splice(hosts.indexOf(h), 1);
}

/** The files of a commit's tree with their bytes, read in one `git cat-file --batch`. */
async function filesAt(repo: string, rev: string): Promise<Map<string, string>> {
  const paths = gitSync(repo, ['ls-tree', '-r', '-z', '--name-only', rev]).split('\0').filter(Boolean);
  const p = spawn('git', ['cat-file', '--batch'], { cwd: repo });
  const chunks: Buffer[] = [];
  p.stdout.on('data', (d: Buffer) => chunks.push(d));
  p.stdin.end(paths.map((x) => `${rev}:${x}\n`).join(''));
  await new Promise((r) => p.on('close', r));
  const all = Buffer.concat(chunks);
  const out = new Map<string, string>();
  let at = 0;
  for (const path of paths) {
    const nl = all.indexOf(10, at);
    const size = Number(all.subarray(at, nl).toString('latin1').split(' ')[2]);
    out.set(path, all.subarray(nl + 1, nl + 1 + size).toString('latin1'));
    at = nl + 1 + size + 1;
  }
  return out;
}

/** The pids of a process's children now (Linux: /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
    } catch {
      // gone
    }
  }
  return out;
}

function cmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * T-1 claimed by one agent, its folder filled with work never committed, then given to another by a person:
 * the first folder is parked. The host stops; returns the parked folder, its token and what it holds.
 */
async function parkedWithWork(root: string, folder: string, many: boolean): Promise<{ path: string; token: number; branch: string; files: Map<string, string> }> {
  const h = await openThread(root, folder);
  await h.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
  await h.board.run((e) => e.addTask({ title: 'work' }));
  const [a, b] = [await idleAgent(h), await idleAgent(h)];
  const c = await h.board.run((e) => e.claim(a, 'T-1'));
  const token = (c.ok && c.value.token) as number;
  const path = (await h.worktrees.worktreeOf('T-1', token))!.path;
  fs.writeFileSync(join(path, 'notes.txt'), 'line one\nchanged, never committed\n');
  fs.mkdirSync(join(path, 'out'));
  fs.writeFileSync(join(path, 'out', 'result.txt'), 'untracked\n');
  if (many) for (let i = 0; i < MANY_FILES; i++) fs.writeFileSync(join(path, 'out', `f${i}.txt`), `file ${i}\n`.repeat(20));
  expect((await h.board.run((e) => e.assign('T-1', b))).ok).toBe(true);
  await h.worktrees.worktreeOf('T-1', h.board.state.tasks.get('T-1')?.claim?.token as number);
  expect(h.board.state.tasks.get('T-1')?.parked.map((p) => p.path)).toEqual([path]);
  const files = filesOf(path);
  const branch = h.board.state.tasks.get('T-1')?.worktree?.branch as string;
  await close(h);
  return { path, token, branch, files };
}

/** Runs the driver until it reaches `step` (or, for `in-git`, until one of its clean-up's git processes runs),
 *  then kills it -9 with everything it started. Returns the git command it was killed inside, if any. */
async function killAt(root: string, folder: string, step: string, path: string): Promise<string | null> {
  const child = spawn(process.execPath, [DRIVER, folder, join(root, 'data'), join(root, 'run'), step], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const pid = child.pid as number;
  const exited = new Promise((r) => child.on('exit', r));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the driver exited (${code}) before step ${step}`)));
  });
  expect(JSON.parse(first)).toEqual({ step: step === 'in-git' ? 'saving' : step, path });
  let inside: string | null = null;
  if (step === 'in-git') {
    // Wait for a git the clean-up runs (git add of thousands of files takes a while), then kill inside it.
    const deadline = Date.now() + 20_000;
    while (!inside && Date.now() < deadline) {
      for (const c of childrenOf(pid)) {
        const argv = cmdline(c);
        if (argv[0]?.endsWith('git')) inside = argv.filter((a) => !a.includes('=') && a !== '-c').slice(1).join(' ');
      }
      if (!inside) await new Promise((r) => setImmediate(r));
    }
    expect(inside, 'no git process of the clean-up was seen').not.toBeNull();
  }
  process.kill(-pid, 'SIGKILL');
  await exited;
  return inside;
}

describe('a clean-up killed -9 loses nothing', () => {
  it.each(['saving', 'ref-written', 'on-board', 'moved', 'forgotten', 'in-git'])(
    'killed at %s: the folder or its saved ref is there; the next start finishes, and the work is under refs/forkbench/parked/ file by file',
    async (step) => {
      const root = fs.mkdtempSync(join(tmpdir(), 'fb-parked-kill-'));
      dirs.push(root);
      const folder = join(root, 'project');
      makeRepo(folder);
      const parked = await parkedWithWork(root, folder, step === 'in-git');
      const inside = await killAt(root, folder, step, parked.path);
      if (inside) console.log(`killed inside: git ${inside}`);

      // Between the kill and the restart: the folder, or the saved ref, never neither.
      const ref = parkedRef(parked.branch, parked.token);
      const refSha = () => gitSync(folder, ['for-each-ref', '--format=%(objectname)', ref]);
      const folderThere = fs.existsSync(join(parked.path, '.git'));
      expect(folderThere || refSha() !== '', 'neither the folder nor its saved ref').toBe(true);
      if (folderThere) expect(filesOf(parked.path)).toEqual(parked.files);
      else expect(await filesAt(folder, refSha())).toEqual(parked.files);

      // The next start: what was begun is finished at once, what was not waits out its grace.
      const clock = new ManualClock();
      const again = await openThread(root, folder, { clock });
      const cleaner = again.worktrees.require().parked;
      await cleaner.sweep();
      clock.advance(GRACE_MS);
      await cleaner.sweep();
      expect(fs.existsSync(parked.path)).toBe(false);
      const t = again.board.state.tasks.get('T-1');
      expect(t?.parked).toEqual([]);
      expect(t?.saved?.map((w) => w.ref)).toEqual([ref]);
      expect(t?.saved?.[0]?.sha).toBe(refSha());
      expect(await filesAt(folder, refSha())).toEqual(parked.files);
      expect(fs.readdirSync(cleaner.trash)).toEqual([]);
      expect(gitSync(folder, ['worktree', 'list', '--porcelain'])).not.toContain(parked.path);
    },
    120_000,
  );
});

/**
 * T-1 claimed, its folder left with work never committed (or clean), and released: the task's latest folder, of
 * a task nobody holds, which the clean-up takes after its grace while the board keeps naming it. The host
 * stops; returns the folder, its token and what it holds.
 */
async function idleLatest(root: string, folder: string, work: boolean): Promise<{ path: string; token: number; branch: string; files: Map<string, string> }> {
  const h = await openThread(root, folder);
  await h.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
  await h.board.run((e) => e.addTask({ title: 'idle' }));
  const a = await idleAgent(h);
  const c = await h.board.run((e) => e.claim(a, 'T-1'));
  const token = (c.ok && c.value.token) as number;
  const path = (await h.worktrees.worktreeOf('T-1', token))!.path;
  if (work) fs.writeFileSync(join(path, 'wip.txt'), 'work in progress, never committed\n');
  expect((await h.board.run((e) => e.release(a, 'T-1', token))).ok).toBe(true);
  const files = filesOf(path);
  const branch = h.board.state.tasks.get('T-1')?.worktree?.branch as string;
  await close(h);
  return { path, token, branch, files };
}

describe('a clean-up of a task’s idle latest folder killed -9 loses nothing, and is never shown as work missing', () => {
  it.each([
    ['ref-written', true],
    ['moved', true],
    ['moved', false],
  ] as const)(
    'killed at %s (work in it: %s): the folder or its saved ref is there; after the restart the Worktrees list says cleaned, with the save if any',
    async (step, work) => {
      const root = fs.mkdtempSync(join(tmpdir(), 'fb-parked-kill-latest-'));
      dirs.push(root);
      const folder = join(root, 'project');
      makeRepo(folder);
      const latest = await idleLatest(root, folder, work);
      const branchHead = gitSync(folder, ['rev-parse', latest.branch]);
      await killAt(root, folder, step, latest.path);

      const ref = parkedRef(latest.branch, latest.token);
      const refSha = () => gitSync(folder, ['for-each-ref', '--format=%(objectname)', ref]);
      const folderThere = fs.existsSync(join(latest.path, '.git'));
      if (work) expect(folderThere || refSha() !== '', 'neither the folder nor its saved ref').toBe(true);
      if (folderThere) expect(filesOf(latest.path)).toEqual(latest.files);
      else if (work) expect(await filesAt(folder, refSha())).toEqual(latest.files);

      const clock = new ManualClock();
      const again = await openThread(root, folder, { clock });
      const git = again.worktrees.require();
      await git.parked.sweep();
      clock.advance(GRACE_MS);
      await git.parked.sweep();
      expect(fs.existsSync(latest.path)).toBe(false);
      const t = again.board.state.tasks.get('T-1');
      // The board keeps naming the latest folder (the next claim starts at its record); the branch is untouched.
      expect(t?.worktree?.path).toBe(latest.path);
      expect(gitSync(folder, ['rev-parse', latest.branch])).toBe(branchHead);
      const row = (await git.folders.list()).find((w) => w.path === latest.path);
      if (work) {
        expect(t?.saved?.map((w) => w.ref)).toEqual([ref]);
        expect(await filesAt(folder, refSha())).toEqual(latest.files);
        expect(row).toMatchObject({ missing: false, cleaned: { savedAs: ref } });
      } else {
        expect(t?.saved ?? []).toEqual([]);
        expect(row).toMatchObject({ missing: false, cleaned: { savedAs: null } });
      }
      expect(fs.readdirSync(git.parked.trash)).toEqual([]);
    },
    120_000,
  );
});
