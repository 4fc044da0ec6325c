/**
 * Issue 16: a pane's process must not inherit the host's descriptors, least of all the pty masters of the
 * panes started before it. node-pty 1.1.0 does not mark its masters close-on-exec (microsoft/node-pty#657),
 * so without the launcher every new agent held /dev/ptmx fds of the earlier panes and could type into them,
 * and leaked masters kept earlier panes alive after the host died. Real ptys, real processes.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runVerify } from '../../../src-main/agents/verifyRunner.js';
import { readProcStat } from '../../../src-main/base/procStat.js';
import { paneTracker, waitFor } from '../../helpers/pty.js';

const linux = process.platform === 'linux';
const tracker = paneTracker();
const pane = tracker.pane;
afterEach(() => tracker.disposeAll());

/** Every descriptor of `pid` and what it points at, read from the host. */
function fdsOf(pid: number): Map<number, string> {
  const dir = `/proc/${pid}/fd`;
  const out = new Map<number, string>();
  for (const name of fs.readdirSync(dir)) {
    try {
      out.set(Number(name), fs.readlinkSync(join(dir, name)));
    } catch {
      // closed between the listing and the read: not held
    }
  }
  return out;
}

/** The pane's process after its launcher exec'd the real program (its command line is the program's). */
async function execd(pid: number, program: string): Promise<void> {
  await waitFor(() => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.endsWith(program), 5_000, `${program} in pid ${pid}`);
}

const ptsOf = (session: { pid: number }) => fdsOf(session.pid).get(0);

describe.runIf(linux)('a pane inherits no descriptor of the host', () => {
  it('the third pane holds only its own terminal on 0, 1 and 2: no master, no other pane’s slave', async () => {
    const panes = [pane('sleep', ['30']), pane('sleep', ['30']), pane('sleep', ['30'])];
    for (const p of panes) await execd(p.session.pid, 'sleep');
    const slaves = panes.map((p) => ptsOf(p.session));
    expect(new Set(slaves).size).toBe(3);
    for (const [i, p] of panes.entries()) {
      const fds = fdsOf(p.session.pid);
      expect([...fds.keys()].sort((a, b) => a - b), `pane ${i}: ${JSON.stringify([...fds])}`).toEqual([0, 1, 2]);
      for (const target of fds.values()) expect(target, `pane ${i}`).toBe(slaves[i]);
      expect([...fds.values()].some((t) => t.includes('ptmx'))).toBe(false);
    }
  });

  it('a later pane cannot type into an earlier one through an inherited descriptor', async () => {
    // The first pane echoes whatever is typed into it (the tty echoes input, cat prints it again).
    const victim = pane('cat', []);
    await execd(victim.session.pid, 'cat');
    pane('sleep', ['30']);
    // The later pane writes a command line into every descriptor from 3 up that it can open for writing,
    // and says how many took it. Perl, because a POSIX sh cannot name descriptors above 9.
    const marker = `PWNED-${process.pid}`;
    const attacker = pane('perl', [
      '-e',
      `my $n = 0; for my $fd (3..1024) { open(my $fh, '>&=', $fd) or next; $n++ if defined syswrite($fh, "echo ${marker}\\n"); } print "wrote into $n\\n";`,
    ]);
    await attacker.session.exited;
    // Had a write reached the victim's master, the victim's own output would show the line typed into it.
    victim.session.write('after\n');
    await waitFor(() => victim.output().includes('after\r\nafter'), 5_000, 'the victim to echo its own input');
    expect(victim.output()).not.toContain(marker);
    expect(attacker.output()).toMatch(/wrote into 0\b/);
  });

  it('when the host dies, an earlier pane hangs up even while a later pane that ignores SIGHUP lives on', async () => {
    // A host of its own (a child process), so that it can really die: SIGKILL, no cleanup of any kind.
    const host = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'fixtures', 'pty', 'twoPaneHost.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    host.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const { first, second } = await waitFor(() => (out.includes('\n') ? (JSON.parse(out) as { first: number; second: number }) : undefined), 20_000, 'the host to print its panes');
    const alive = (pid: number) => {
      const st = readProcStat(pid);
      return st !== undefined && st.state !== 'zombie' && st.state !== 'gone';
    };
    try {
      await execd(first, 'sleep');
      await execd(second, 'sleep');
      host.kill('SIGKILL');
      // The first pane's master closes with the host, unless the second pane inherited it and holds it.
      await waitFor(() => !alive(first), 5_000, 'the first pane to hang up after the host died');
      expect(alive(second)).toBe(true);
    } finally {
      host.kill('SIGKILL');
      for (const pid of [first, second]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });

  it('the launcher adds nothing a pane can see: no perl locale warning, no variable of its own', async () => {
    const p = pane('/bin/sh', ['-c', 'echo "badlang=${PERL_BADLANG-unset}"'], {}, { LANG: 'xx_XX.UTF-8', LC_ALL: 'xx_XX.UTF-8' });
    await p.session.exited;
    expect(p.output().trim()).toBe('badlang=unset');
    const theirs = pane('/bin/sh', ['-c', 'echo "badlang=${PERL_BADLANG-unset}"'], {}, { PERL_BADLANG: '1' });
    await theirs.session.exited;
    expect(theirs.output().trim()).toBe('badlang=1');
  });

  it('a verify command run by the host holds no pane’s terminal either', async () => {
    pane('sleep', ['30']);
    const p2 = pane('sleep', ['30']);
    await execd(p2.session.pid, 'sleep');
    const cwd = fs.mkdtempSync(join(tmpdir(), 'forkbench-fds-'));
    try {
      // The verify shell's own descriptors, listed by a child while the shell waits on it (so the listing
      // itself opens none in the shell).
      const out = await runVerify('ls -l /proc/$$/fd', cwd, 10_000);
      expect(out.passed, out.tail).toBe(true);
      const held = [...out.tail.matchAll(/ (\d+) -> (.+)$/gm)].map((m) => ({ fd: Number(m[1]), target: m[2] }));
      expect(held.map((h) => h.fd).sort((a, b) => a - b), out.tail).toEqual([0, 1, 2]);
      expect(out.tail).not.toMatch(/ptmx|\/dev\/pts\//);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
