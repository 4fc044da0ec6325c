/**
 * A tab closed while its shell is still running its start-up files must not break the user's shell set-up.
 * pyenv's `rehash`, run from ~/.bashrc, takes a lock file with noclobber and removes it in an EXIT trap;
 * bash runs that trap only once the command it is waiting on returns. A shell ended with SIGKILL at that
 * moment left the lock, and every later login shell on the machine waited 60 s for it. The fixture here
 * takes a lock the same way, from the shell's own start-up file in a home folder of the test's own.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/host/threadHost.js';
import { lingeringKills } from '../../../src-main/pty/processGroupKiller.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/pty.js';

const fixture = hostFixture('startup-lock');
const homes: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fixture.cleanup();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

/** Like pyenv-rehash: the lock by noclobber, released on EXIT; its work is a command that finishes what it
 *  is doing (0.4 s, hang-up or not) before bash gets to the trap. */
const REHASH = `#!/bin/bash
lock="$HOME/.shim-lock"
set -o noclobber
echo > "$lock" 2>/dev/null || exit 1
set +o noclobber
trap 'rm -f "$lock"' EXIT
echo $$ > "$HOME/rehash.pid"
while :; do bash -c 'trap "" HUP TERM; sleep 0.4'; done
`;

function lockingHome(): { home: string; env: Record<string, string> } {
  const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-lock-home-'));
  homes.push(home);
  const vars = makeHome(home, { 'rehash.sh': REHASH, '.profile': '"$HOME/rehash.sh"\n' });
  fs.chmodSync(join(home, 'rehash.sh'), 0o755);
  return { home, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SHELL: '/bin/bash', LANG: 'C.UTF-8', ...vars } };
}

describe('a tab closed during its shell’s start-up', () => {
  it('leaves no lock in that shell’s home folder: its processes get HUP and TERM before KILL', async () => {
    const { home, env } = lockingHome();
    const host = await fixture.open({ env });
    const agent = await host.roster.launch('shell');
    // The start-up file is inside its lock now.
    const pid = await waitFor(() => fs.existsSync(join(home, 'rehash.pid')) && Number(fs.readFileSync(join(home, 'rehash.pid'), 'utf8')), 10_000, 'the start-up file to take its lock');
    expect(fs.existsSync(join(home, '.shim-lock'))).toBe(true);
    await host.roster.close(agent.id);
    await lingeringKills();
    expect(alive(pid), 'the lock holder is gone').toBe(false);
    expect(fs.existsSync(join(home, '.shim-lock')), 'the lock was released').toBe(false);
  });

  it('in a pty host (serve and the app): the lock is released too', async () => {
    const { home, env } = lockingHome();
    const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-lock-pty-'));
    fs.mkdirSync(join(root, 'project'));
    const link = await PtyHostLink.open(join(root, 'data'), { idleMs: 60_000 });
    const host = await ThreadHost.open({ folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, env, ptyHost: link });
    cleanups.push(async () => {
      await host.dispose();
      await link.shutdown();
      fs.rmSync(root, { recursive: true, force: true });
    });
    const agent = await host.roster.launch('shell');
    const pid = await waitFor(() => fs.existsSync(join(home, 'rehash.pid')) && Number(fs.readFileSync(join(home, 'rehash.pid'), 'utf8')), 10_000, 'the start-up file to take its lock');
    await host.roster.close(agent.id);
    // The pty host's own killer ends it: within its 2 s bound.
    await waitFor(() => !alive(pid), 5_000, 'the lock holder to end');
    expect(fs.existsSync(join(home, '.shim-lock')), 'the lock was released').toBe(false);
  });
});
