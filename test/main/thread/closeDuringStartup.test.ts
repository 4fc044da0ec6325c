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
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { lingeringKills } from '../../../src-main/pty/processGroupKiller.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/pty.js';
import { openTestHost } from '../../helpers/testHost.js';

const fixture = hostFixture('startup-lock');
const homes: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fixture.cleanup();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

/** Like pyenv-rehash: the lock by noclobber, released on EXIT; its work is a command that finishes what it
 *  is doing (0.4 s, hang-up or not) before bash gets to the trap. The lock lies in $LOCK_DIR: the home, as
 *  pyenv's, for a shell that writes its home (uncontained); a folder it shares with other agents and writes
 *  contained (the Thread folder of a Thread without git), where a lock left behind stops them the same way.
 *  `rehash.started` says it is inside its lock. */
const REHASH = `#!/bin/bash
lock="$LOCK_DIR/.shim-lock"
set -o noclobber
echo > "$lock" 2>/dev/null || exit 1
set +o noclobber
trap 'rm -f "$lock"' EXIT
echo $$ > "$LOCK_DIR/rehash.started"
while :; do bash -c 'trap "" HUP TERM; sleep 0.4'; done
`;

/** `lockDir`: the shell's expression for the lock's folder ("$HOME", or "$PWD": its starting folder, the
 *  Thread's). */
function lockingHome(lockDir: string): { home: string; env: Record<string, string> } {
  const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-lock-home-'));
  homes.push(home);
  const vars = makeHome(home, { 'rehash.sh': REHASH, '.profile': `LOCK_DIR=${lockDir} "$HOME/rehash.sh"\n` });
  fs.chmodSync(join(home, 'rehash.sh'), 0o755);
  return { home, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SHELL: '/bin/bash', LANG: 'C.UTF-8', ...vars } };
}

/** The host's pid of the lock holder (the pid it writes is its sandbox's own when contained): the process
 *  running that home's start-up script. */
function lockHolder(home: string, lockDir: string): number | false {
  if (!fs.existsSync(join(lockDir, 'rehash.started'))) return false;
  const cmdline = `/bin/bash\0${join(home, 'rehash.sh')}\0`;
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8') === cmdline) return Number(name);
    } catch {
      /* gone meanwhile */
    }
  }
  return false;
}

/** Where the lock lies: the home, uncontained (only there does a shell write its home: the pyenv case);
 *  the Thread folder, contained. */
const CASES = [
  { name: 'uncontained, its lock in the home folder', lockDir: '"$HOME"', uncontained: ['all'] },
  { name: 'contained, its lock in the Thread folder', lockDir: '"$PWD"', uncontained: undefined },
] as const;

describe.each(CASES)('a tab closed during its shell’s start-up ($name)', ({ lockDir, uncontained }) => {
  const lockIn = (home: string, folder: string) => (lockDir === '"$HOME"' ? home : folder);

  it('leaves no lock in that shell’s home folder: its processes get HUP and TERM before KILL', async () => {
    const { home, env } = lockingHome(lockDir);
    const host = await fixture.open({ env, uncontained });
    const dir = lockIn(home, host.folder);
    const agent = await host.roster.launch('shell');
    // The start-up file is inside its lock now.
    const pid = await waitFor(() => lockHolder(home, dir), 10_000, 'the start-up file to take its lock');
    expect(fs.existsSync(join(dir, '.shim-lock'))).toBe(true);
    await host.roster.close(agent.id);
    await lingeringKills();
    expect(alive(pid), 'the lock holder is gone').toBe(false);
    expect(fs.existsSync(join(dir, '.shim-lock')), 'the lock was released').toBe(false);
  });

  it('in a pty host (serve and the app): the lock is released too', async () => {
    const { home, env } = lockingHome(lockDir);
    const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-lock-pty-'));
    fs.mkdirSync(join(root, 'project'));
    const dir = lockIn(home, join(root, 'project'));
    const link = await PtyHostLink.open(join(root, 'data'), { idleMs: 60_000 });
    const { host } = await openTestHost({ closedBy: 'caller', folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, env, ptyHost: link, uncontained });
    cleanups.push(async () => {
      await host.dispose();
      await link.shutdown();
      fs.rmSync(root, { recursive: true, force: true });
    });
    const agent = await host.roster.launch('shell');
    const pid = await waitFor(() => lockHolder(home, dir), 10_000, 'the start-up file to take its lock');
    await host.roster.close(agent.id);
    // The pty host's own killer ends it: within its 2 s bound.
    await waitFor(() => !alive(pid), 5_000, 'the lock holder to end');
    expect(fs.existsSync(join(dir, '.shim-lock')), 'the lock was released').toBe(false);
  });
});
