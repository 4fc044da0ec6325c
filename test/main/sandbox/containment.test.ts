/**
 * Issue 43, items 1 and 4: each agent's view says whether it is contained and by what, and the window is told
 * plainly, once, where agents are not. Real Thread hosts, real panes (and a real pty host for the restart):
 * the containment on the view is what the process really runs in, read from its pid namespace.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Containment } from '../../../src-shared/agents/containment.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { probeBwrap } from '../../../src-main/sandbox/bwrapProbe.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { Fixture } from '../../helpers/gitFixture.js';
import { waitFor } from '../../helpers/pty.js';
import { openTestHost } from '../../helpers/testHost.js';

const fx = new Fixture();
// The pty host runs the built code.
beforeAll(() => ensureBuilt());
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fx.cleanup();
});

/** The pid namespace a process is in (`pid:[4026531836]`): the host's own, or a sandbox's. */
const pidNamespace = (pid: number | 'self') => fs.readlinkSync(`/proc/${pid}/ns/pid`);

/** Sleeps no other process of the machine sleeps for: how the agent's own process is found below its pane's
 *  root (contained, the root is the outer bwrap, which stays in the host's namespace). */
let nextSleep = 700_000 + (process.pid % 10_000) * 10;
const sleeper = () => {
  const n = nextSleep++;
  return { command: `exec sleep ${n}`, pid: () => findSleep(n) };
};
function findSleep(n: number): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${n}\0`) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Launches a custom agent that sleeps; its view, and the pid of its own process once it runs. */
async function launchSleeper(host: ThreadHost): Promise<{ id: string; containment: Containment | undefined; pid: number }> {
  const s = sleeper();
  const a = await host.roster.launch('custom', { command: s.command });
  const pid = await waitFor(s.pid, 10_000, `${a.name}'s sleep to run`);
  return { id: a.id, containment: host.roster.agents().find((x) => x.id === a.id)?.containment, pid };
}

const viewOf = (host: ThreadHost, id: string) => host.roster.agents().find((x) => x.id === id)?.containment;
const sandboxNotices = (host: ThreadHost) => host.notices.current().filter((n) => n.about === `sandbox:${host.key}`);

describe('whether an agent is contained, on its view', async () => {
  const support = await probeBwrap();

  it.skipIf(!support.ok)('contained by bubblewrap by default; the Thread setting naming its profile runs the next one uncontained, in the host’s pid namespace, and the window is told once', async () => {
    const { host } = await fx.host({ repo: false });
    const pushes: WindowPush[] = [];
    host.notices.onPush.event((p) => void pushes.push(p));
    expect(sandboxNotices(host)).toEqual([]);

    const contained = await launchSleeper(host);
    expect(contained.containment).toEqual({ by: 'bwrap' });
    expect(pidNamespace(contained.pid)).not.toBe(pidNamespace('self'));

    expect((await host.board.run((e) => e.setSettings({ uncontained: ['custom'] }))).ok).toBe(true);
    const off = await launchSleeper(host);
    expect(off.containment).toEqual({ by: null, why: "the sandbox is turned off for custom in this Thread's settings" });
    // Really not in a sandbox: the agent's process shares the host's pid namespace.
    expect(pidNamespace(off.pid)).toBe(pidNamespace('self'));
    // The agent launched before the change keeps what it was started with.
    expect(viewOf(host, contained.id)).toEqual({ by: 'bwrap' });

    // The plain warning, once: a notice for the window, kept for a window opened later.
    const warning = `agents of custom are not contained: the sandbox is turned off for them in this Thread's settings. To fix it: untick them under "Run without a sandbox" in Thread settings`;
    expect(sandboxNotices(host).map((n) => n.body)).toEqual([warning]);
    expect(pushes.filter((p) => p.type === 'notify' && p.about === `sandbox:${host.key}`)).toHaveLength(1);
    // Another settings change that leaves the sandbox as it was tells nothing again.
    await host.board.run((e) => e.setSettings({ leaseMs: 90_000 }));
    expect(pushes.filter((p) => p.type === 'notify' && p.about === `sandbox:${host.key}`)).toHaveLength(1);
    // Turned back on: the warning goes, and the next agent is contained again.
    await host.board.run((e) => e.setSettings({ uncontained: [] }));
    expect(sandboxNotices(host)).toEqual([]);
    expect((await launchSleeper(host)).containment).toEqual({ by: 'bwrap' });
  });

  it.skipIf(!support.ok)('the host’s launch option and the Thread setting together: each profile’s agents say which turned the sandbox off', async () => {
    const root = fx.tmp();
    fs.mkdirSync(join(root, 'project'));
    const { host } = await openTestHost({ closedBy: 'caller', folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, uncontained: ['shell'] });
    cleanups.push(() => host.dispose());
    await host.board.run((e) => e.setSettings({ uncontained: ['custom'] }));
    const shell = await host.roster.launch('shell');
    const custom = await launchSleeper(host);
    expect(viewOf(host, shell.id)).toEqual({ by: null, why: "the sandbox is turned off for shell by the host's launch option (--uncontained)" });
    expect(custom.containment).toEqual({ by: null, why: "the sandbox is turned off for custom in this Thread's settings" });
    expect(sandboxNotices(host).map((n) => n.body.split('\n'))).toEqual([
      [
        "agents of shell are not contained: the sandbox is turned off for them by the host's launch option. To fix it: start the host without --uncontained",
        `agents of custom are not contained: the sandbox is turned off for them in this Thread's settings. To fix it: untick them under "Run without a sandbox" in Thread settings`,
      ],
    ]);
  });

  it('where bubblewrap cannot contain agents: every agent says why, and the window is told once with the fix', async () => {
    const root = fx.tmp();
    fs.mkdirSync(join(root, 'project'));
    const said: string[] = [];
    const missing = { ok: false as const, reason: 'bubblewrap (bwrap) is not installed', fix: 'sudo apt install bubblewrap' };
    const { host } = await openTestHost({ closedBy: 'caller', folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, sandboxSupport: missing, warn: (m) => said.push(m) });
    cleanups.push(() => host.dispose());
    const warning = 'agents are not contained on this machine: bubblewrap (bwrap) is not installed. To fix it: sudo apt install bubblewrap';
    expect(sandboxNotices(host).map((n) => [n.title, n.body])).toEqual([['Agents are not contained', warning]]);
    expect(said).toEqual([warning]);
    const a = await launchSleeper(host);
    const b = await launchSleeper(host);
    expect([a.containment, b.containment]).toEqual([
      { by: null, why: 'bubblewrap (bwrap) is not installed' },
      { by: null, why: 'bubblewrap (bwrap) is not installed' },
    ]);
    expect(pidNamespace(a.pid)).toBe(pidNamespace('self'));
    // Once: two agents launched, a setting changed, still the one notice.
    await host.board.run((e) => e.setSettings({ uncontained: ['custom'] }));
    expect(sandboxNotices(host)).toHaveLength(1);
  });

  it.skipIf(!support.ok)('agents a pty host kept through a board host restart keep the containment they were started with, not the setting’s of now', async () => {
    const root = fx.tmp();
    fs.mkdirSync(join(root, 'project'));
    const f = { folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false };
    const open = async () => {
      const link = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      const { host } = await openTestHost({ closedBy: 'caller', ...f, ptyHost: link });
      let done = false;
      cleanups.push(async () => {
        if (done) return;
        done = true;
        await host.dispose();
        await link.shutdown();
      });
      return { host, link, leave: async () => ((done = true), await host.leave(), link.leave()) };
    };
    const first = await open();
    const contained = await launchSleeper(first.host);
    await first.host.board.run((e) => e.setSettings({ uncontained: ['custom'] }));
    const off = await launchSleeper(first.host);
    // Turned back on before the restart: a guess from the setting would call both contained.
    await first.host.board.run((e) => e.setSettings({ uncontained: [] }));
    await first.leave();

    const second = await open();
    expect(second.link.started).toBe(false);
    expect(second.host.roster.agents().map((a) => [a.id, a.status, a.containment])).toEqual([
      [contained.id, 'running', { by: 'bwrap' }],
      [off.id, 'running', { by: null, why: "the sandbox is turned off for custom in this Thread's settings" }],
    ]);
    expect(pidNamespace(contained.pid)).not.toBe(pidNamespace('self'));
    expect(pidNamespace(off.pid)).toBe(pidNamespace('self'));
  });
});
