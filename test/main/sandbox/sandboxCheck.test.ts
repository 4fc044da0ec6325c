/**
 * `forkbench sandbox check` (issue 43, item 4): the real CLI starts a fresh sandbox as the roster does and
 * reports each promise from what the sandboxed shell could do. Where bwrap is missing it says so, with the fix,
 * and its probes, run as an uncontained agent runs, show the promises broken: the report is measured, not
 * assumed.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { probeBwrap } from '../../../src-main/sandbox/bwrapProbe.js';
import { Exit } from '../../../src-shared/protocol/cliWords.js';

beforeAll(() => ensureBuilt());
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface Report {
  contained: boolean;
  warning: string | null;
  promises: Array<{ id: string; held: boolean }>;
}

/** Runs the check with a home of its own (it tries to write there) and the given PATH. */
function check(path: string): Promise<{ code: number; report: Report; home: string }> {
  const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-check-home-'));
  dirs.push(home);
  return new Promise((resolve) =>
    execFile(process.execPath, [CLI, 'sandbox', 'check', '--json'], { env: { PATH: path, HOME: home } }, (err, stdout) =>
      resolve({ code: err ? Number(err.code) : 0, report: JSON.parse(stdout) as Report, home }),
    ),
  );
}

describe('forkbench sandbox check', async () => {
  const support = await probeBwrap();
  it.skipIf(!support.ok)('in a fresh sandbox every promise holds: its own folder and the socket reached; terminals, the data folder, .git, the host, another worktree, the Thread folder and the home not', async () => {
    const { code, report } = await check(process.env.PATH ?? '/usr/bin:/bin');
    expect(report.contained).toBe(true);
    expect(report.promises.filter((p) => !p.held)).toEqual([]);
    expect(report.promises.map((p) => p.id)).toEqual(['own-folder', 'board-socket', 'other-terminals', 'data-folder', 'git-hooks', 'git-config', 'serve-proc', 'serve-kill', 'other-worktree', 'thread-folder', 'home']);
    expect(code).toBe(Exit.ok);
  });

  it('without bwrap it says agents are not contained, with the fix, and its probes show the promises broken; it leaves the home as it was', async () => {
    // A PATH with the shell's tools but no bwrap.
    const bin = fs.mkdtempSync(join(tmpdir(), 'forkbench-check-bin-'));
    dirs.push(bin);
    for (const tool of ['sh', 'ls', 'grep', 'cat', 'echo', 'rm', 'test', 'kill', 'sleep']) {
      const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, join(bin, tool));
    }
    const { code, report, home } = await check(bin);
    expect(code).toBe(Exit.notHeld);
    expect(report.contained).toBe(false);
    expect(report.warning).toMatch(/agents are not contained on this machine: bubblewrap \(bwrap\) is not installed\. To fix it: sudo apt install bubblewrap/);
    const broken = report.promises.filter((p) => !p.held).map((p) => p.id);
    for (const id of ['data-folder', 'git-hooks', 'git-config', 'serve-proc', 'serve-kill', 'other-worktree', 'thread-folder', 'home']) expect(broken).toContain(id);
    expect(fs.readdirSync(home)).toEqual([]);
  });
});
