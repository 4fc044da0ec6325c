/**
 * Resuming an agent's conversation through the host, with a real pty and a real process: a stand-in for an
 * agent CLI, installed as `claude` on the panes' PATH, that keeps a "conversation" by the session id it is
 * given (a file in its state folder, Claude Code's ~/.claude, which a sandbox lets it write), shows it again
 * on `--resume <id>`, and claims T-1 through `forkbench` as an agent does. The agent is killed -9, resumed by the window's `agent.resume`, and again after the host
 * itself was closed and opened anew: the same agent id each time, a new secret, a new claim with a new token.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { WindowRouter } from '../../../src-main/window/windowRouter.js';
import { ensureBuilt } from '../../helpers/cli.js';

/** The stand-in CLI (see the fixture), installed as `claude` on the panes' PATH. */
const FAKE_CLI = join(import.meta.dirname, '..', '..', 'fixtures', 'fakeSessionCli.sh');

const roots: string[] = [];
const managers: ThreadManager[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  for (const d of roots.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-resume-'));
  roots.push(root);
  const folder = join(root, 'project');
  const home = join(root, 'home');
  const bin = join(root, 'bin');
  for (const d of [folder, home, bin]) fs.mkdirSync(d);
  fs.copyFileSync(FAKE_CLI, join(bin, 'claude'));
  fs.chmodSync(join(bin, 'claude'), 0o755);
  const warnings: string[] = [];
  const manager = () => {
    const m = new ThreadManager({
      dataRoot: join(root, 'data'),
      runtimeRoot: join(root, 'run'),
      liveness: false,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, LANG: 'C.UTF-8' },
      warn: (w) => warnings.push(w),
    });
    managers.push(m);
    return m;
  };
  return { root, folder, home, manager, warnings };
}

/** Resolves with everything the agent's pane printed once it matches `pattern`. */
function paneShows(host: ThreadHost, agentId: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; the pane printed: ${seen.slice(-500)}`)), timeoutMs);
    const sub = host.roster.relay.onData.event(({ agentId: id, data }) => {
      if (id !== agentId) return;
      seen += data;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(seen);
      }
    });
  });
}

function untilExited(host: ThreadHost, agentId: string): Promise<void> {
  return new Promise((resolve) => {
    const sub = host.roster.onExit.event((e) => {
      if (e.agentId === agentId) {
        sub.dispose();
        resolve();
      }
    });
  });
}

const grants = async (host: ThreadHost) => (await host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'grant' }> => e.kind === 'grant');
const agentOf = (host: ThreadHost, id: string) => host.roster.agents().find((a) => a.id === id);

describe('resuming an agent on its own conversation', () => {
  it('killed -9, it is resumed by agent.resume as the same agent with a new secret, and claims again with a new token', async () => {
    const { folder, home, manager } = setup();
    const threads = manager();
    const router = new WindowRouter(threads);
    const host = await threads.open(folder);
    await host.board.run((e) => e.addTask({ title: 'write hello.txt' }));

    const first = await host.roster.launch('claude');
    const firstOut = await paneShows(host, first.id, /CLAIMED \d+ AS /);
    const sessionId = /NEW SESSION (\S+)/.exec(firstOut)?.[1];
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(firstOut).toContain(`CLAIMED 1 AS ${first.id}`);
    const firstSecret = host.roster.agent(first.id)!.secret;

    // A resume is refused while the process runs: it would be two processes on one conversation.
    const early = await router.call('agent.resume', { key: host.key, agentId: first.id }, 'win-1');
    expect(early).toMatchObject({ ok: false });

    const exited = untilExited(host, first.id);
    process.kill(-first.pid!, 'SIGKILL');
    await exited;
    expect(agentOf(host, first.id)).toMatchObject({ status: 'exited', resumable: true, claims: [] });
    expect((await host.board.log()).filter((e) => e.kind === 'claim-ended').map((e) => (e as { reason: string }).reason)).toEqual(['process-exited']);

    const resumedOut = paneShows(host, first.id, /CLAIMED \d+ AS /);
    const reply = await router.call('agent.resume', { key: host.key, agentId: first.id }, 'win-1');
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const resumed = (reply as { ok: true; value: AgentInfo }).value;
    expect(resumed).toMatchObject({ id: first.id, name: first.name, profile: 'claude', status: 'running', resumable: false });
    expect(resumed.pid).not.toBe(first.pid);
    const out = await resumedOut;
    // The CLI was pointed at its own conversation, which it found.
    expect(out).toContain(`RESUMED ${sessionId}: first message`);
    expect(fs.readFileSync(join(home, '.claude', 'sessions', sessionId!), 'utf8')).toBe('first message\nagain\n');
    // A new claim through the board, under a new token; the old secret is dead.
    expect(out).toContain(`CLAIMED 2 AS ${first.id}`);
    expect((await grants(host)).map((g) => [g.agentId, g.token])).toEqual([
      [first.id, 1],
      [first.id, 2],
    ]);
    expect(host.roster.authenticate(firstSecret)).toBeNull();
    expect(host.roster.agent(first.id)!.secret).not.toBe(firstSecret);
    expect(host.roster.agents().filter((a) => a.id === first.id)).toHaveLength(1);
  }, 60_000);

  it('resumed the moment its death is known (before waiting for its exit): the new process keeps its secret and its claim', async () => {
    const { folder, manager } = setup();
    const threads = manager();
    const host = await threads.open(folder);
    await host.board.run((e) => e.addTask({ title: 'write hello.txt' }));
    const first = await host.roster.launch('claude');
    await paneShows(host, first.id, /CLAIMED 1 AS /);
    // The death (its claims released, the tab exited) comes ~1 ms after the kill; the exit, after the
    // output tail has drained, or when the resume disposes the old session. Nothing of the old pane's
    // ending may reach the resumed agent's secret or claims.
    const dead = new Promise<void>((resolve) => {
      const sub = host.roster.onAgents.event((list) => {
        if (list.find((a) => a.id === first.id)?.status === 'exited') {
          sub.dispose();
          resolve();
        }
      });
    });
    process.kill(-first.pid!, 'SIGKILL');
    await dead;
    const claimed = paneShows(host, first.id, /CLAIMED 2 AS /);
    await host.roster.resume(first.id);
    await claimed;
    const rec = host.roster.agent(first.id)!;
    expect(host.roster.authenticate(rec.secret)).toBe(rec);
    expect(rec.status).toBe('running');
    expect(host.board.engine.claimsOf(first.id)).toEqual(['T-1']);
    expect((await host.board.log()).filter((e) => e.kind === 'claim-ended')).toHaveLength(1);
  }, 60_000);

  it('after the host was closed and opened again, the tab is back as exited and resumes the same conversation', async () => {
    const { folder, manager, warnings } = setup();
    let threads = manager();
    let host = await threads.open(folder);
    await host.board.run((e) => e.addTask({ title: 'write hello.txt' }));
    const first = await host.roster.launch('claude');
    const firstOut = await paneShows(host, first.id, /CLAIMED \d+ AS /);
    const sessionId = /NEW SESSION (\S+)/.exec(firstOut)![1]!;
    // A shell keeps no conversation: it comes back to be relaunched, not resumed.
    const shell = await host.roster.launch('shell');
    await threads.dispose();
    managers.splice(managers.indexOf(threads), 1);

    threads = manager();
    host = await threads.open(folder);
    expect(host.roster.agents().map((a) => a.id)).toEqual([first.id, shell.id]);
    // Each listed with how it ended and what it held (the stop ended its claim on T-1).
    expect(agentOf(host, first.id)).toMatchObject({ name: first.name, status: 'exited', resumable: true, pid: null, claims: [], lastRun: { how: 'host-stopped', held: ['T-1'] } });
    expect(agentOf(host, shell.id)).toMatchObject({ name: shell.name, status: 'exited', resumable: false, lastRun: { how: 'host-stopped', held: [] } });
    // Nothing can act as the agent before it is resumed.
    expect(host.roster.isRunning(first.id)).toBe(false);

    const out = paneShows(host, first.id, /CLAIMED \d+ AS /);
    const resumed = await host.roster.resume(first.id);
    expect(resumed).toMatchObject({ id: first.id, status: 'running' });
    expect(resumed.lastRun).toBeUndefined();
    const text = await out;
    expect(text).toContain(`RESUMED ${sessionId}: first message`);
    // The claim the host's close ended is not revived: a new grant with the next token.
    expect(text).toContain(`CLAIMED 2 AS ${first.id}`);
    // A new launch counts on after the restored names.
    const next = await host.roster.launch('claude');
    expect(next.name).toBe('claude 2');
    expect(warnings).toEqual([]);
  }, 60_000);

  it('a shell the host stop ended is listed by the next run with what it held, and relaunched under its own name in the Thread folder', async () => {
    const { folder, manager } = setup();
    let threads = manager();
    let host = await threads.open(folder);
    await host.board.run((e) => e.addTask({ title: 'write hello.txt' }));
    const shell = await host.roster.launch('shell');
    await host.board.run((e) => e.assign('T-1', shell.id));
    await threads.dispose();
    managers.splice(managers.indexOf(threads), 1);

    threads = manager();
    host = await threads.open(folder);
    expect(host.roster.agents()).toEqual([expect.objectContaining({ id: shell.id, name: shell.name, profile: 'shell', status: 'exited', lastRun: { how: 'host-stopped', held: ['T-1'], titles: { 'T-1': 'write hello.txt' }, exit: null, at: expect.any(Number) } })]);
    const again = await host.roster.relaunch(shell.id);
    expect(again).toMatchObject({ name: shell.name, profile: 'shell', status: 'running' });
    expect(again.id).not.toBe(shell.id);
    expect(again.lastRun).toBeUndefined();
    // It took the ended one's place: one agent listed, the ended one's record gone.
    expect(host.roster.agents().map((a) => a.id)).toEqual([again.id]);
    // In the Thread's folder: its shell says so.
    const where = paneShows(host, again.id, /WHERE=\/\S+/);
    host.roster.relay.input(again.id, 'echo WHERE=$PWD\r');
    expect(/WHERE=(\/\S+)/.exec(await where)?.[1]).toBe(fs.realpathSync(folder));
  }, 60_000);

  it('a damaged record file is set aside with a message; the board and its tasks are untouched', async () => {
    const { folder, manager, warnings } = setup();
    let threads = manager();
    let host = await threads.open(folder);
    await host.board.run((e) => e.addTask({ title: 'keep me' }));
    const first = await host.roster.launch('claude');
    await paneShows(host, first.id, /CLAIMED \d+ AS /);
    const records = join(host.board.dir, 'agents.json');
    expect(fs.statSync(records).mode & 0o777).toBe(0o600);
    await threads.dispose();
    managers.splice(managers.indexOf(threads), 1);
    fs.writeFileSync(records, '{"version":1,"agents":[{"id":');

    threads = manager();
    host = await threads.open(folder);
    expect(warnings.some((w) => w.includes(`the agent records in ${records} are damaged`) && w.includes('its board is untouched'))).toBe(true);
    expect(host.roster.agents()).toEqual([]);
    expect([...host.board.state.tasks.values()].map((t) => t.title)).toEqual(['keep me']);
    expect(fs.readdirSync(host.board.dir).some((f) => f.startsWith('agents.json.corrupt-'))).toBe(true);
    // The Thread goes on: a new agent is recorded in a fresh file.
    await host.roster.launch('claude');
    expect(JSON.parse(fs.readFileSync(records, 'utf8')).agents).toHaveLength(1);
  }, 60_000);
});
