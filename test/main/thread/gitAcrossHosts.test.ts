/**
 * Issue 33: task branches travel between machines. Two hosts (each its own clone, data and runtime folders,
 * as two machines) on one PostgreSQL board, their clones of one bare repository as the Thread's remote:
 * - a claim moved from host A's agent to host B's starts B's worktree at A's last recorded commit, fetched
 *   from the remote's refs/forkbench/tasks/<board>/T-1, where A pushed each record;
 * - A killed -9 while its push of a recorded commit hangs in the remote's pre-receive hook: B's claim starts
 *   at the last pushed record, and the task's history names the lost commit, who recorded it and where;
 * - the remote moved away: "not on the remote yet" said once, and B waits, then starts from the last pushed
 *   record naming what it lacks; a remote that refuses the namespace: one note;
 * - a clone whose remote is another repository does not join the board, and says both URLs.
 * Before, B's grant ran `git worktree add` at a commit its clone never had: the claim ended and the task was
 * blocked (`No worktree: … not a commit`), nothing was pushed, and any clone joined.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { boardNameFor } from '../../../src-main/board/pg/connection.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { agentEnv, branchOf, gitSync, idleAgent, makeRepo, remoteRefOf, sh, strayOf } from '../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/pty.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { openTestHost } from '../../helpers/testHost.js';

/** How long B waits for another host's push here: long enough for a live host's push on a loaded machine,
 *  short enough that the tests that need the wait to end do not take the product's 30 s. */
const PUSH_WAIT_MS = 1_500;
const DRIVER = join(import.meta.dirname, '..', '..', 'helpers', 'gitHostDriver.mjs');

let pgc: PgCluster;
let url: string;
const hosts: ThreadHost[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
  url = await pgc.createDatabase('across');
});
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const c of children.splice(0)) if (c.pid && alive(c.pid)) process.kill(-c.pid, 'SIGKILL');
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(prefix: string): string {
  const d = fs.mkdtempSync(join(tmpdir(), `fb-across-${prefix}-`));
  dirs.push(d);
  return d;
}

/** A bare repository with `main` (one commit), as the Thread's remote; `gate` is where its hook looks. */
function bareRemote(): { bare: string; gate: string } {
  const root = tmp('remote');
  const seed = join(root, 'seed');
  makeRepo(seed);
  const bare = join(root, 'remote.git');
  gitSync(root, ['init', '-q', '--bare', '-b', 'main', bare]);
  gitSync(seed, ['push', '-q', bare, 'main']);
  const gate = join(root, 'gate');
  fs.mkdirSync(gate);
  execFileSync('mkfifo', [join(gate, 'fifo')]);
  // `hold`: the push waits in the hook on the fifo until the test writes it (a push in flight); `deny`: refused.
  fs.writeFileSync(
    join(bare, 'hooks', 'pre-receive'),
    `#!/bin/sh\nif [ -e '${gate}/deny' ]; then echo 'refs/forkbench is protected here' >&2; exit 1; fi\nif [ -e '${gate}/hold' ]; then touch '${gate}/entered'; cat '${gate}/fifo' >/dev/null; fi\nexit 0\n`,
    { mode: 0o755 },
  );
  return { bare, gate };
}

function cloneOf(bare: string, prefix: string): { root: string; folder: string } {
  const root = tmp(prefix);
  const folder = join(root, 'clone');
  gitSync(root, ['clone', '-q', bare, folder]);
  return { root, folder };
}

async function hostOn(bare: string, o: { name?: string; pushWaitMs?: number } = {}): Promise<{ host: ThreadHost; folder: string }> {
  const { root, folder } = cloneOf(bare, 'host');
  const { host } = await openTestHost({
    closedBy: 'caller',
    folder,
    dataRoot: join(root, 'data'),
    runtimeRoot: join(root, 'run'),
    liveness: false,
    // Its tests commit with the agent's secret from the test process, outside any pane (peerJudges.ts).
    peerJudge: secretsFromTheTestProcess,
    sharedBoard: { url, ...(o.name ? { name: o.name } : {}) },
    gitRemote: { pushWaitMs: o.pushWaitMs ?? PUSH_WAIT_MS },
  });
  hosts.push(host);
  return { host, folder };
}

/** A commit through the fence, as the agent's git makes it in its worktree: its sha. */
async function commit(wt: string, env: NodeJS.ProcessEnv, line: string): Promise<string> {
  const r = await sh(wt, `echo '${line}' >> notes.txt && git commit -qam '${line}' && git rev-parse HEAD`, env);
  if (r.code !== 0) throw new Error(`commit failed: ${r.stderr}`);
  return r.stdout.trim();
}

function remoteRef(bare: string, ref: string): string | null {
  const out = gitSync(bare, ['for-each-ref', '--format=%(objectname)', ref]);
  return out || null;
}

const notesOf = (host: ThreadHost) => host.board.state.tasks.get('T-1')?.notes.map((n) => n.text) ?? [];

/** B's agent takes T-1 over (a person reassigns it): the new claim's token. */
async function takeOverStart(b: ThreadHost): Promise<number> {
  b.board.membership!.hostAgent('agent-b');
  const r = await b.board.run((e) => e.assign('T-1', 'agent-b'));
  if (!r.ok) throw new Error(r.error.message);
  return r.value.token as number;
}

/** B's agent takes T-1 over, and B's folder for it is made: where, and at which commit. */
async function takeOver(b: ThreadHost): Promise<{ path: string; head: string }> {
  const wt = await b.worktrees.worktreeOf('T-1', await takeOverStart(b));
  if (!wt) throw new Error('no worktree hand-over on B');
  return { path: wt.path, head: gitSync(wt.path, ['rev-parse', 'HEAD']) };
}

/** A's agent claims T-1 on A (in this process) and its folder is made: its worktree and git environment. */
async function claimOnA(a: ThreadHost): Promise<{ wt: string; env: NodeJS.ProcessEnv; agentA: string }> {
  await a.board.run((e) => e.addTask({ title: 'travel' }));
  const agentA = await idleAgent(a);
  const c = await a.board.run((e) => e.claim(agentA, 'T-1'));
  const wt = await a.worktrees.worktreeOf('T-1', (c.ok && c.value.token) as number);
  if (!wt) throw new Error('no worktree on A');
  return { wt: wt.path, env: agentEnv(a, agentA), agentA };
}

const rewound = (log: BoardEvent[]) => log.filter((e): e is Extract<BoardEvent, { kind: 'record-rewound' }> => e.kind === 'record-rewound');

describe('task branches across hosts', () => {
  it('a claim moved to another host starts at the last recorded commit, fetched from the remote', async () => {
    const { bare } = bareRemote();
    const a = await hostOn(bare);
    const b = await hostOn(bare);
    // The board took its remote from the first clone that joined.
    expect(a.host.board.state.settings.remote).toEqual({ name: 'origin', url: bare });
    const { wt, env } = await claimOnA(a.host);
    await commit(wt, env, 'one');
    const two = await commit(wt, env, 'two');
    // B learns the record and that it reached the remote, which holds it in Forkbench's namespace only.
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.pushed?.sha === two, 20_000, 'the last record pushed');
    // Both hosts name the task's refs alike: the board's key is the board's, not a host's.
    expect(remoteRefOf(b.host, 'T-1')).toBe(remoteRefOf(a.host, 'T-1'));
    expect(remoteRef(bare, remoteRefOf(a.host, 'T-1'))).toBe(two);
    expect(remoteRef(bare, `refs/heads/${branchOf(a.host, 'T-1')}`)).toBeNull();
    const moved = await takeOver(b.host);
    expect(moved.head).toBe(two);
    expect(fs.readFileSync(join(moved.path, 'notes.txt'), 'utf8')).toBe('line one\none\ntwo\n');
    const t = b.host.board.state.tasks.get('T-1');
    expect(t?.state).toBe('claimed');
    expect(t?.record?.sha).toBe(two);
    const log = await b.host.board.log();
    expect(rewound(log)).toEqual([]);
    expect(log.filter((e) => e.kind === 'blocked')).toEqual([]);
  }, 90_000);

  it('host A killed -9 while its push hangs: B starts at the last pushed record, and the history names the lost commit', async () => {
    const { bare, gate } = bareRemote();
    const b = await hostOn(bare);
    await b.host.board.run((e) => e.addTask({ title: 'travel' }));
    // A in a process of its own (its own process group, so the kill takes its git push and the remote's
    // receive-pack with it, as a machine's death would).
    const { root, folder } = cloneOf(bare, 'host-a');
    const child = spawn(process.execPath, [DRIVER, folder, join(root, 'data'), join(root, 'run'), url], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const line = await waitFor(() => out.includes('\n') && out.split('\n')[0], 60_000, 'host A to hand out its worktree');
    const a = JSON.parse(line) as { agentId: string; secret: string; socket: string; wt: string; hostId: string };
    const env = { FORKBENCH_SOCKET: a.socket, FORKBENCH_SECRET: a.secret, FORKBENCH_AGENT_ID: a.agentId };
    const one = await commit(a.wt, env, 'one');
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.pushed?.sha === one, 20_000, 'the first commit pushed');
    // The next push waits in the remote's hook: A is killed with it in flight, after the record.
    fs.writeFileSync(join(gate, 'hold'), '');
    const two = await commit(a.wt, env, 'two');
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the second commit recorded');
    await waitFor(() => fs.existsSync(join(gate, 'entered')), 20_000, 'the push to reach the remote hook');
    process.kill(-child.pid!, 'SIGKILL');
    await waitFor(() => !alive(child.pid!), 10_000, 'host A gone');
    fs.rmSync(join(gate, 'hold'));
    expect(remoteRef(bare, remoteRefOf(b.host, 'T-1'))).toBe(one);

    const t0 = performance.now();
    const moved = await takeOver(b.host);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(PUSH_WAIT_MS - 50);
    expect(moved.head).toBe(one);
    expect(fs.readFileSync(join(moved.path, 'notes.txt'), 'utf8')).toBe('line one\none\n');
    const t = b.host.board.state.tasks.get('T-1');
    expect(t?.record?.sha).toBe(one);
    const [r] = rewound(await b.host.board.log());
    expect(r).toMatchObject({ from: two, to: { sha: one }, lost: [{ sha: two, by: a.agentId, host: { id: a.hostId } }] });
    const said = notesOf(b.host).find((n) => n.startsWith('Lost with the host'));
    expect(said).toContain(two.slice(0, 7));
    expect(said).toContain(a.agentId);
    expect(said).toContain(a.hostId.slice(0, 8));
    expect(said).toContain(`the last record that reached the remote, ${one.slice(0, 7)}`);
    b.host.board.membership!.hostAgent('agent-b');
  }, 120_000);

  it('a claim elsewhere while the record is mid-push waits for it, and starts there: nothing lost', async () => {
    const { bare, gate } = bareRemote();
    const a = await hostOn(bare);
    // Long enough that only the push, never the wait's end, can let B go on.
    const b = await hostOn(bare, { pushWaitMs: 60_000 });
    const { wt, env } = await claimOnA(a.host);
    const one = await commit(wt, env, 'one');
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.pushed?.sha === one, 20_000, 'the first commit pushed');
    fs.writeFileSync(join(gate, 'hold'), '');
    const two = await commit(wt, env, 'two');
    await waitFor(() => fs.existsSync(join(gate, 'entered')), 20_000, 'the push to reach the remote hook');
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the second record');
    const token = await takeOverStart(b.host);
    const handed = b.host.worktrees.worktreeOf('T-1', token);
    // The holder is told what its folder waits for, not that the repository is large.
    await waitFor(() => notesOf(b.host).some((n) => n.includes(`record ${two.slice(0, 7)}`) && n.includes('waits up to 60 s')), 20_000, 'the wait said');
    fs.rmSync(join(gate, 'hold'));
    await fs.promises.writeFile(join(gate, 'fifo'), 'go\n');
    const wtB = await handed;
    expect(gitSync(wtB!.path, ['rev-parse', 'HEAD'])).toBe(two);
    expect(rewound(await b.host.board.log())).toEqual([]);
    expect(notesOf(b.host).filter((n) => n.startsWith('Lost'))).toEqual([]);
  }, 90_000);

  it('a value in the namespace that is not the record is kept aside on the remote and overwritten', async () => {
    const { bare } = bareRemote();
    const a = await hostOn(bare);
    const { wt, env } = await claimOnA(a.host);
    const one = await commit(wt, env, 'one');
    await waitFor(() => a.host.board.state.tasks.get('T-1')?.pushed?.sha === one, 20_000, 'the first commit pushed');
    // Someone writes the task's ref on the remote: a commit the board never recorded.
    const other = cloneOf(bare, 'someone').folder;
    fs.writeFileSync(join(other, 'notes.txt'), 'not the task\n');
    gitSync(other, ['commit', '-qam', 'forged']);
    const forged = gitSync(other, ['rev-parse', 'HEAD']);
    gitSync(other, ['push', '-q', '--force', 'origin', `${forged}:${remoteRefOf(a.host, 'T-1')}`]);
    const two = await commit(wt, env, 'two');
    await waitFor(() => a.host.board.state.tasks.get('T-1')?.pushed?.sha === two, 20_000, 'the second commit pushed');
    expect(remoteRef(bare, remoteRefOf(a.host, 'T-1'))).toBe(two);
    expect(remoteRef(bare, strayOf(a.host, 'T-1', forged))).toBe(forged);
  }, 90_000);

  it('remote unreachable: "not on the remote yet" once; B waits, then starts at the last pushed record naming what it lacks', async () => {
    const { bare } = bareRemote();
    const a = await hostOn(bare);
    const b = await hostOn(bare);
    const { wt, env, agentA } = await claimOnA(a.host);
    const base = a.host.board.state.tasks.get('T-1')?.record?.sha;
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.pushed?.sha === base, 20_000, 'the start record pushed');
    fs.renameSync(bare, `${bare}.away`);
    const one = await commit(wt, env, 'one');
    await waitFor(() => notesOf(a.host).some((n) => n.includes('not on the remote yet')), 20_000, 'the note');
    const two = await commit(wt, env, 'two');
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the second record');
    await a.host.worktrees.git!.pushes.idle();
    const moved = await takeOver(b.host);
    expect(moved.head).toBe(base);
    const [r] = rewound(await b.host.board.log());
    expect(r?.lost.map((l) => [l.sha, l.by])).toEqual([
      [one, agentA],
      [two, agentA],
    ]);
    const notes = notesOf(b.host);
    expect(notes.filter((n) => n.includes('not on the remote yet'))).toHaveLength(1);
    expect(notes.find((n) => n.startsWith('Lost with the host'))).toContain(`the last record that reached the remote, ${base!.slice(0, 7)}`);
  }, 90_000);

  it('a remote that refuses the namespace: one note, however many records', async () => {
    const { bare, gate } = bareRemote();
    fs.writeFileSync(join(gate, 'deny'), '');
    const a = await hostOn(bare);
    const { wt, env } = await claimOnA(a.host);
    await commit(wt, env, 'one');
    await a.host.worktrees.git!.pushes.idle();
    const two = await commit(wt, env, 'two');
    await waitFor(() => a.host.board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the record');
    await a.host.worktrees.git!.pushes.idle();
    const refused = notesOf(a.host).filter((n) => n.includes(`refused ${remoteRefOf(a.host, 'T-1')}`));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain('refs/forkbench is protected here');
    expect(a.host.board.state.tasks.get('T-1')?.pushed).toBeNull();
  }, 90_000);

  it('a clone of another repository does not join the board, and says both URLs', async () => {
    const { bare } = bareRemote();
    const a = await hostOn(bare);
    const other = bareRemote().bare;
    const name = await boardNameFor(a.folder);
    const err = await hostOn(other, { name }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain(`the remote 'origin' at ${bare}`);
    expect(err?.message).toContain(`has the remote 'origin' at ${other}`);
    expect(err?.message).toContain('Nothing was changed');
    // The board is as it was: its remote, and no host of that clone's agents.
    expect(a.host.board.state.settings.remote?.url).toBe(bare);
  }, 60_000);
});
