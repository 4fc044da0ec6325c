import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/processes.js';
import { openTestHost } from '../../helpers/testHost.js';

/**
 * The pty host killed -9 while a new board host takes its agents back: after it listed them (before the
 * board opens on that list, while it opens, or as the panes are adopted), and while the list is still
 * unanswered. Nothing hangs, every claim ends once, no agent is left running (one that ignores SIGHUP
 * included), and the next launch gets a new pty host.
 */

const linux = process.platform === 'linux';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});


function folders() {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-reattach-'));
  const folder = join(root, 'project');
  fs.mkdirSync(folder);
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  return { folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run') };
}

/** A failure says what the pty hosts logged: a fault test that fails is about their side too. */
async function withLog(dataRoot: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    let log = '(no log)';
    try {
      log = fs.readFileSync(join(dataRoot, 'ptyhost', 'ptyhost.log'), 'utf8');
    } catch {
      // none written
    }
    throw new Error(`${(err as Error).message}\nthe pty hosts' log:\n${log}`, { cause: err });
  }
}

async function openWith(f: ReturnType<typeof folders>, link: PtyHostLink): Promise<ThreadHost> {
  const { host } = await openTestHost({ closedBy: 'caller', ...f, liveness: false, ptyHost: link });
  cleanups.push(async () => {
    await host.dispose();
    await link.shutdown();
  });
  return host;
}

async function claim(host: ThreadHost, agentId: string, title: string): Promise<string> {
  const t = await host.board.run((e) => e.addTask({ title }));
  if (!t.ok) throw new Error(t.error.message);
  const c = await host.board.run((e) => e.claim(agentId, t.value.id));
  if (!c.ok) throw new Error(c.error.message);
  return t.value.id;
}

type Found = Awaited<ReturnType<PtyHostLink['panesOf']>>;
/** Where, in the new board host's taking back, the pty host is killed. */
const FAULTS: Array<{ when: string; reason: string; around: (pid: number, list: () => Promise<Found>) => Promise<Found> }> = [
  {
    when: 'right after its list is answered, before the board opens on it',
    reason: 'agent-exited',
    around: async (pid, list) => {
      const got = await list();
      process.kill(pid, 'SIGKILL');
      // Its loss is seen (every listed pane ends as lost) before the board opens believing them alive.
      await waitFor(() => got.every((g) => g.pty.exit), 5_000, 'the listed panes to be lost');
      return got;
    },
  },
  ...[0, 5, 30].map((ms) => ({
    when: `${ms} ms after its list is answered, while the board opens and the panes are adopted`,
    reason: 'agent-exited',
    around: async (pid: number, list: () => Promise<Found>) => {
      const got = await list();
      setTimeout(() => process.kill(pid, 'SIGKILL'), ms);
      return got;
    },
  })),
  {
    when: 'while its list is unanswered',
    // Nothing was listed; but with a pty host no agent ends with its board host, so a holder gone by now
    // exited: here, with its pty host.
    reason: 'agent-exited',
    around: async (pid, list) => {
      process.kill(pid, 'SIGSTOP');
      const listing = list();
      process.kill(pid, 'SIGKILL');
      return listing;
    },
  },
];

describe.runIf(linux)('the pty host killed -9 while a new board host takes its agents back', () => {
  it.each(FAULTS)('$when: every claim ends once, no agent lives on, the next launch gets a new pty host', async ({ reason, around }) => {
    const f = folders();
    await withLog(f.dataRoot, async () => {
      const firstLink = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      const { host: first } = await openTestHost({ closedBy: 'caller', ...f, liveness: false, ptyHost: firstLink });
      const a = await first.roster.launch('shell');
      // One that ignores the hangup its pty's end sends: only a kill of its group ends it.
      const b = await first.roster.launch('custom', { command: 'trap "" HUP; while :; do sleep 1; done' });
      const tasks = [await claim(first, a.id, 'one'), await claim(first, b.id, 'two')];
      await first.leave();
      firstLink.leave();
      const oldHost = firstLink.hostPid;

      const link = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      expect(link.hostPid).toBe(oldHost);
      const listOf = link.panesOf.bind(link);
      link.panesOf = (key) => {
        expect([alive(a.pid!), alive(b.pid!)], 'both agents run when the fault comes').toEqual([true, true]);
        return around(oldHost, () => listOf(key));
      };
      const host = await openWith(f, link);

      await waitFor(() => tasks.every((t) => host.board.state.tasks.get(t)?.claim === null), 10_000, 'both claims to end');
      await waitFor(() => !alive(a.pid!) && !alive(b.pid!), 5_000, 'both agents to be gone').catch((e: Error) => {
        throw new Error(`${e.message}: a ${alive(a.pid!)}, b (ignores SIGHUP) ${alive(b.pid!)}`);
    });
    // The board's state is what it decided; its log, what its journal has made durable. A contained agent dies
    // with its pty host at once (bwrap --die-with-parent), so both claims can end within a few ms of the
    // check above, their events still on the way to the disk: a write that decides nothing waits for them.
    await host.board.apply(() => undefined);
    const ends = host.board.logTail(200).filter((e: BoardEvent) => e.kind === 'claim-ended');
    expect(ends.map((e) => [(e as { taskId: string }).taskId, (e as { reason: string }).reason]).sort()).toEqual(tasks.map((t) => [t, reason]));
    expect(host.roster.isRunning(a.id) || host.roster.isRunning(b.id)).toBe(false);

    const c = await host.roster.launch('shell');
    expect(alive(c.pid!)).toBe(true);
    expect(link.hostPid).not.toBe(oldHost);
    expect(alive(oldHost)).toBe(false);
    });
  });
});

describe.runIf(linux)('the pty host killed -9 while no board host ran', () => {
  it('the next board host starts a new pty host and ends the claims of the agents that died with the old one as agent-exited, once', async () => {
    const f = folders();
    await withLog(f.dataRoot, async () => {
      const firstLink = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      const { host: first } = await openTestHost({ closedBy: 'caller', ...f, liveness: false, ptyHost: firstLink });
      const a = await first.roster.launch('shell');
      const b = await first.roster.launch('shell');
      const tasks = [await claim(first, a.id, 'one'), await claim(first, b.id, 'two')];
      await first.leave();
      firstLink.leave();
      process.kill(firstLink.hostPid, 'SIGKILL');
      await waitFor(() => !alive(firstLink.hostPid), 5_000, 'the pty host to die');

      const link = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      expect(link.started).toBe(true);
      const host = await openWith(f, link);
      expect(tasks.map((t) => host.board.state.tasks.get(t)?.claim ?? null)).toEqual([null, null]);
      const ends = host.board.logTail(200).filter((e: BoardEvent) => e.kind === 'claim-ended');
      expect(ends.map((e) => [(e as { taskId: string }).taskId, (e as { reason: string }).reason]).sort()).toEqual(tasks.map((t) => [t, 'agent-exited']));
      await waitFor(() => !alive(a.pid!) && !alive(b.pid!), 5_000, 'both agents to be gone');
    });
  });
});

describe.runIf(linux)('an agent that outlives its pty host', () => {
  it('killed -9 with no board host connected: the agent that ignores SIGHUP is ended when the next pty host starts, which says so', async () => {
    const f = folders();
    await withLog(f.dataRoot, async () => {
      const first = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      const who = { threadKey: 'k', agentId: 'stubborn', secretDigest: 'd'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'custom', name: 'stubborn' };
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() };
      const pane = await first.spawn('/bin/sh', ['-c', 'trap "" HUP; while :; do sleep 1; done'], { cwd: tmpdir(), env, cols: 80, rows: 24 }, who);
      first.leave();
      const oldHost = first.hostPid;
      process.kill(oldHost, 'SIGKILL');
      await waitFor(() => !alive(oldHost), 5_000, 'the pty host to die');
      expect(alive(pane.pid), 'it ignores the hangup of its terminal').toBe(true);
      cleanups.push(() => {
        if (alive(pane.pid)) process.kill(-pane.pid, 'SIGKILL');
      });

      const next = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
      cleanups.push(() => next.shutdown());
      expect(next.started).toBe(true);
      await waitFor(() => !alive(pane.pid), 5_000, 'the orphan to be ended');
      expect(fs.readFileSync(join(f.dataRoot, 'ptyhost', 'ptyhost.log'), 'utf8')).toContain(`ended 1 process(es) of the panes of a pty host that died: pids ${pane.pid}`);
    });
  });
});
