import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { boardUrlFile, startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { servedHostsOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 31, two hosts on one board: two real `serve` processes (each its own data folder, runtime folder and
 * project folder, as two machines), both given one PostgreSQL board by FORKBENCH_BOARD_URL and `--board-name`. A task
 * added in A's window is in B's; a shell agent on A claims it with the real CLI and B's window shows the
 * claim; an agent on B is refused it; serve A killed -9 has its agent's claim ended `host-lost` by B within
 * the host lease (short here) plus a sweep. The board's URL never reaches an agent's environment.
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
/** A short host lease, so a killed host is noticed in seconds (the default is 15 s). */
const HOST_LEASE_MS = 1500;

let pgc: PgCluster;
let url: string;

beforeAll(async () => {
  pgc = await startPgCluster();
  url = await pgc.createDatabase('team');
});
afterAll(async () => {
  await pgc?.dispose();
});
// After the database's hooks: its serves are stopped before the database is (vitest runs afterAll hooks last first).
const hosts = servedHostsOfThisFile('fb-shared-');

async function host(name: string): Promise<{ s: ServeProc; key: string }> {
  const p = hosts.place(name);
  const s = await hosts.start(p, { args: ['--board-name', 'team board', '--host-lease-ms', String(HOST_LEASE_MS)], env: { FORKBENCH_BOARD_URL: url } });
  return { s, key: p.key };
}

const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
type Snap = { board: { tasks: Array<{ id: string; title: string; claim: { agentId: string; token: number } | null; lastClaim: { reason: string } | null }> } };
const taskOn = async (s: ServeProc, key: string, id: string) => ((await s.window.call('thread.snapshot', { key })) as Snap).board.tasks.find((t) => t.id === id);

describe('two serve processes on one PostgreSQL board', () => {
  it('one backlog, one fence across hosts; a paused or killed host’s claims end host-lost; the URL stays out of agents', async () => {
    const a = await host('a');
    const b = await host('b');
    await a.s.window.call('task.add', { key: a.key, title: 'shared work' });
    await waitFor(async () => (await taskOn(b.s, b.key, 'T-1'))?.title === 'shared work', 10_000, 'B to see the task A added');

    const agentA: AgentInfo = await a.s.window.call('agent.launch', { key: a.key, profile: 'shell', cols: 120, rows: 30 });
    await a.s.window.call('agent.input', { key: a.key, agentId: agentA.id, data: `forkbench claim T-1; echo "URL=[$FORKBENCH_BOARD_URL]"; echo "EXIT"=$?=END\r` });
    await waitFor(() => /EXIT=\d+=END/.test(paneText(a.s, agentA.id)), 30_000, 'the claim on A');
    expect(paneText(a.s, agentA.id)).toContain('URL=[]');
    await waitFor(async () => (await taskOn(b.s, b.key, 'T-1'))?.claim?.agentId === agentA.id, 10_000, 'B to see A’s agent holding T-1');

    const agentB: AgentInfo = await b.s.window.call('agent.launch', { key: b.key, profile: 'shell', cols: 120, rows: 30 });
    await b.s.window.call('agent.input', { key: b.key, agentId: agentB.id, data: `forkbench claim T-1; echo "EXIT"=$?=END\r` });
    await waitFor(() => /EXIT=\d+=END/.test(paneText(b.s, agentB.id)), 30_000, 'the claim on B');
    expect(paneText(b.s, agentB.id)).not.toContain('EXIT=0=END');
    // Each window lists the other host's agent, with that host's name, as a drop target without a terminal.
    type Listed = { agents: AgentInfo[] };
    const listedOn = async (s: ServeProc, key: string, id: string) => ((await s.window.call('thread.snapshot', { key })) as Listed).agents.find((x) => x.id === id);
    const bOnA = await waitFor(() => listedOn(a.s, a.key, agentB.id), 10_000, 'A to list B’s agent');
    expect(bOnA.host).toEqual(expect.any(String));
    expect((await listedOn(b.s, b.key, agentA.id))?.claims).toEqual(['T-1']);

    // A is paused past its host lease (a laptop lid): B ends its agent's claim; A, woken, finds its lease gone,
    // says so in its window, and its agent's next write is refused.
    a.s.proc.kill('SIGSTOP');
    await waitFor(async () => (await taskOn(b.s, b.key, 'T-1'))?.lastClaim?.reason === 'host-lost', 30_000, 'B to end the paused host’s claim');
    a.s.proc.kill('SIGCONT');
    await waitFor(() => a.s.window.pushes.find((p) => p.type === 'notify' && p.about === `host-lapsed:${a.key}`), 20_000, 'A’s window to say its lease lapsed');
    await a.s.window.call('agent.input', { key: a.key, agentId: agentA.id, data: `forkbench note T-1 "after the pause"; echo "WOKE"=$?=END\r` });
    await waitFor(() => /WOKE=\d+=END/.test(paneText(a.s, agentA.id)), 30_000, 'the woken agent’s write');
    expect(paneText(a.s, agentA.id)).not.toContain('WOKE=0=END');

    // A claims again, then dies without a word: its agent (kept by A's pty host) lives on, but nobody vouches
    // for its claim.
    await a.s.window.call('agent.input', { key: a.key, agentId: agentA.id, data: `forkbench claim T-1; echo "RECLAIM"=$?=END\r` });
    await waitFor(() => /RECLAIM=\d+=END/.test(paneText(a.s, agentA.id)), 30_000, 'A’s agent to claim again');
    expect(paneText(a.s, agentA.id)).toContain('RECLAIM=0=END');
    await waitFor(async () => (await taskOn(b.s, b.key, 'T-1'))?.claim?.agentId === agentA.id, 10_000, 'B to see the new claim');
    const killedAt = performance.now();
    a.s.proc.kill('SIGKILL');
    await a.s.exit;
    await waitFor(async () => {
      const t = await taskOn(b.s, b.key, 'T-1');
      return t !== undefined && !t.claim;
    }, 30_000, 'B to end the claim of A’s agent');
    const t = await taskOn(b.s, b.key, 'T-1');
    expect(t?.lastClaim?.reason).toBe('host-lost');
    // Within the host lease plus a renewal period of B's (the sweep) and some slack for a loaded machine.
    expect(performance.now() - killedAt).toBeLessThan(HOST_LEASE_MS + HOST_LEASE_MS / 3 + 5_000);
    await b.s.window.call('agent.input', { key: b.key, agentId: agentB.id, data: `forkbench claim T-1; echo "AGAIN"=$?=END\r` });
    await waitFor(() => /AGAIN=\d+=END/.test(paneText(b.s, agentB.id)), 30_000, 'the second claim on B');
    expect(paneText(b.s, agentB.id)).toContain('AGAIN=0=END');
    b.s.proc.kill('SIGINT');
    await b.s.exit;
  }, 180_000);

  it('a database that cannot be reached at start: one line naming host and database, never the password; nothing started', async () => {
    const { at, project } = hosts.place('c');
    const bad = `postgresql://forkbench:s3cret-pw@/nosuchdb?host=${join(hosts.root, 'no-socket-here')}`;
    const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'serve', project, '--board-url-file', boardUrlFile(at, bad)], {
      env: { ...process.env, FORKBENCH_DATA_DIR: join(at, 'data'), XDG_RUNTIME_DIR: join(at, 'run'), FORKBENCH_PTY_HOST: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => proc.on('exit', r));
    expect(code).toBe(1);
    expect(out).toMatch(/cannot open the board at .*\/nosuchdb/);
    expect(out).not.toContain('s3cret-pw');
    expect(out).not.toContain('Open http');
  }, 60_000);

  it('the database stopped with a note in flight: the CLI sends it again with its key until the database is back, it lands once, and the window’s notice comes and goes', async () => {
    // The default host lease (15 s): an outage of a few seconds does not cost the host its agents' claims.
    const d = hosts.place('d');
    const key = d.key;
    const outageUrl = await pgc.createDatabase('outage');
    const s = await hosts.start(d, { args: ['--board-url-file', boardUrlFile(d.at, outageUrl)] });
    await s.window.call('task.add', { key, title: 'noted through an outage' });
    const agent: AgentInfo = await s.window.call('agent.launch', { key, profile: 'shell', cols: 120, rows: 30 });
    await s.window.call('agent.input', { key, agentId: agent.id, data: `forkbench claim T-1; echo "CLAIM"=$?=END\r` });
    await waitFor(() => /CLAIM=0=END/.test(paneText(s, agent.id)), 30_000, 'the claim');
    await pgc.stopServer('fast');
    await s.window.call('agent.input', { key, agentId: agent.id, data: `FORKBENCH_TIMEOUT_MS=60000 forkbench note T-1 "once"; echo "NOTE"=$?=END\r` });
    await waitFor(() => paneText(s, agent.id).includes('the board is unavailable'), 30_000, 'the CLI to say it sends the note again');
    const notice = await waitFor(() => s.window.pushes.find((p) => p.type === 'notify' && p.about === `read-only:${key}`), 10_000, 'the read-only notice');
    await pgc.startServer();
    await waitFor(() => /NOTE=\d+=END/.test(paneText(s, agent.id)), 60_000, 'the note to land');
    expect(paneText(s, agent.id)).toContain('NOTE=0=END');
    await waitFor(() => s.window.pushes.some((p) => p.type === 'notice-gone' && p.id === (notice as { id: string }).id), 20_000, 'the notice withdrawn');
    const details = await s.window.call('task.details', { key, taskId: 'T-1' });
    expect(details.notes.filter((n: { text: string }) => n.text === 'once')).toHaveLength(1);
    s.proc.kill('SIGINT');
    await s.exit;
  }, 150_000);
});
