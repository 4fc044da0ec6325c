import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { agentWorktreesOf } from '../../../src-main/sandbox/agentReach.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import { gitSync, makeRepo } from '../../helpers/gitFixture.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/processes.js';
import { openTestHost } from '../../helpers/testHost.js';

const linux = process.platform === 'linux';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});


function folders() {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-thread-'));
  const folder = join(root, 'project');
  fs.mkdirSync(folder);
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  return { folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run') };
}

async function openWith(f: ReturnType<typeof folders>, warn?: (m: string) => void): Promise<{ host: ThreadHost; link: PtyHostLink }> {
  const link = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
  const { host } = await openTestHost({ closedBy: 'caller', ...f, liveness: false, ptyHost: link, warn });
  let done = false;
  cleanups.push(async () => {
    if (done) return;
    done = true;
    await host.dispose();
    await link.shutdown();
  });
  return { host, link };
}

async function claim(host: ThreadHost, agentId: string, title: string): Promise<{ taskId: string; token: number }> {
  const t = await host.board.run((e) => e.addTask({ title }));
  if (!t.ok) throw new Error(t.error.message);
  const c = await host.board.run((e) => e.claim(agentId, t.value.id));
  if (!c.ok) throw new Error(c.error.message);
  return { taskId: t.value.id, token: c.value.token };
}

/** Polls the pane's screen until it shows `text`. */
const screenShows = (host: ThreadHost, agentId: string, text: string) =>
  waitFor(async () => (await host.roster.relay.screen(agentId)).includes(text), 10_000, `the screen to show ${text}`);

/** Run in an agent's shell: waits until the board host's socket answers, then until it does not (that host
 *  is gone), then connects every millisecond and, the moment one succeeds, makes one call as this agent and
 *  writes the answer. Marker files say where it is. */
const POLL_FIRST_CALL = String.raw`
use IO::Socket::UNIX; use Time::HiRes qw(usleep);
my ($result) = @ARGV;
my $path = $ENV{FORKBENCH_SOCKET};
sub try { IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) }
until (my $c = try()) { usleep(5000) }
open(my $m, '>', "$result.armed"); close $m;
while (my $c = try()) { close $c; usleep(5000) }
open($m, '>', "$result.waiting"); close $m;
my $c;
usleep(1000) until ($c = try());
print $c qq({"jsonrpc":"2.0","id":1,"method":"board","params":{},"auth":"$ENV{FORKBENCH_SECRET}"}
);
my $line = <$c>;
open(my $out, '>', "$result.tmp"); print $out $line; close $out; rename("$result.tmp", $result);
`;

const endsOf = (events: BoardEvent[]) => events.filter((e) => e.kind === 'claim-ended').map((e) => ({ agentId: (e as { agentId: string }).agentId, reason: (e as { reason: string }).reason }));

describe.runIf(linux)('a Thread whose agents run in the pty host', () => {
  it('pty host killed -9: every agent claim ends agent-exited at once; the next launch gets a new pty host', async () => {
    const { host, link } = await openWith(folders());
    const a = await host.roster.launch('shell');
    const b = await host.roster.launch('custom', { command: 'yes flood' });
    await claim(host, a.id, 'one');
    await claim(host, b.id, 'two');
    const events: BoardEvent[] = [];
    host.board.onEvent((e) => events.push(e));
    const oldHost = link.hostPid;
    const t0 = performance.now();
    process.kill(oldHost, 'SIGKILL');
    await waitFor(() => endsOf(events).length === 2, 5_000, 'both claims to end');
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(endsOf(events).sort((x, y) => x.agentId.localeCompare(y.agentId))).toEqual(
      [{ agentId: a.id, reason: 'agent-exited' }, { agentId: b.id, reason: 'agent-exited' }].sort((x, y) => x.agentId.localeCompare(y.agentId)),
    );
    await waitFor(() => !alive(a.pid!) && !alive(b.pid!), 5_000, 'agents gone');
    expect(host.roster.isRunning(a.id)).toBe(false);
    // The board host carries on: a new agent starts in a new pty host.
    const c = await host.roster.launch('custom', { command: 'echo "NEW"-HOST; exec sleep 60' });
    expect(alive(c.pid!)).toBe(true);
    expect(link.hostPid).not.toBe(oldHost);
    expect(alive(link.hostPid)).toBe(true);
  });

  it('a board host that leaves keeps agents and claims; the next one adopts them under the same ids, secrets and names', async () => {
    const f = folders();
    const first = await openWith(f);
    const a = await first.host.roster.launch('shell');
    const b = await first.host.roster.launch('shell');
    const ca = await claim(first.host, a.id, 'kept');
    const cb = await claim(first.host, b.id, 'lost');
    const secretA = first.host.roster.agent(a.id)!.secret;
    first.host.roster.relay.input(a.id, 'echo "MARK"-A\r');
    await screenShows(first.host, a.id, 'MARK-A');
    await first.host.leave();
    first.link.leave();
    expect(alive(a.pid!) && alive(b.pid!)).toBe(true);
    process.kill(b.pid!, 'SIGKILL');
    await waitFor(() => !alive(b.pid!), 5_000, 'b to die');

    const second = await openWith(f);
    expect(second.link.started).toBe(false);
    const h = second.host;
    // b, dead while no board host ran, is listed as found gone (issue 32: the window lists the agents that ended).
    expect(h.roster.agents().map((x) => [x.id, x.pid, x.status, x.name, x.lastRun?.how])).toEqual([
      [a.id, a.pid, 'running', a.name, undefined],
      [b.id, null, 'exited', b.name, 'found-gone'],
    ]);
    expect(h.roster.authenticate(secretA)?.id).toBe(a.id);
    expect(h.board.state.tasks.get(ca.taskId)?.claim).toMatchObject({ agentId: a.id, token: ca.token });
    expect(h.board.state.tasks.get(cb.taskId)?.claim).toBeNull();
    expect(h.board.logTail(50).filter((e) => e.kind === 'claim-ended')).toMatchObject([{ agentId: b.id, taskId: cb.taskId, reason: 'agent-exited' }]);
    expect(await h.roster.relay.screen(a.id)).toContain('MARK-A');
    // Typing reaches it; names go on counting; a death now is the watched process-exited.
    h.roster.relay.input(a.id, 'echo "AGAIN"-A\r');
    await screenShows(h, a.id, 'AGAIN-A');
    const c = await h.roster.launch('shell');
    expect(c.name).toBe('shell 3');
    const ended = new Promise<BoardEvent>((resolve) => h.board.onEvent((e) => e.kind === 'claim-ended' && resolve(e)));
    process.kill(a.pid!, 'SIGKILL');
    expect(await ended).toMatchObject({ agentId: a.id, reason: 'process-exited' });
  });

  it('a restart says how each gone agent ended, as recorded when it did: killed while its host ran (and when), or while none ran (issue 45)', async () => {
    const f = folders();
    const first = await openWith(f);
    const ranHost = await first.host.roster.launch('custom', { command: 'exec sleep 300' });
    const noHost = await first.host.roster.launch('custom', { command: 'exec sleep 300' });
    const { taskId } = await claim(first.host, ranHost.id, 'work');
    const ended = new Promise<BoardEvent>((resolve) => first.host.board.onEvent((e) => e.kind === 'claim-ended' && resolve(e)));
    const killedAt = Date.now();
    process.kill(ranHost.pid!, 'SIGKILL');
    expect(await ended).toMatchObject({ agentId: ranHost.id, taskId, reason: 'process-exited' });
    // Its exit status too, before the host leaves: the record then says all of it.
    await waitFor(() => first.host.roster.agents().find((x) => x.id === ranHost.id)?.exit != null, 5_000, 'its exit status');
    const seenAt = Date.now();
    await first.host.leave();
    first.link.leave();
    const noHostKilledAt = Date.now();
    process.kill(noHost.pid!, 'SIGKILL');
    // Its exit status, as the pty host reads it once the pane's output has drained: its log says when it has.
    const ptyLog = ptyHostPaths(f.dataRoot).log;
    await waitFor(() => fs.readFileSync(ptyLog, 'utf8').includes(`(${noHost.name}, pid ${noHost.pid}) ended: SIGKILL`), 5_000, 'the pty host to see the second agent end');

    const notes: string[] = [];
    const link = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000, warn: (m) => notes.push(m) });
    const { host } = await openTestHost({ closedBy: 'caller', ...f, liveness: false, ptyHost: link, warn: (m) => notes.push(m) });
    cleanups.push(async () => {
      await host.dispose();
      await link.shutdown();
    });
    const said = notes.join('\n');
    expect(said).toContain(`1 agent(s) ended while their board host ran: ${ranHost.name} (pid ${ranHost.pid}), killed by SIGKILL at `);
    expect(said).toContain(`1 agent(s) ended while no board host ran: ${noHost.name} (pid ${noHost.pid}), killed by SIGKILL at `);
    const lastRun = new Map(host.roster.agents().map((x) => [x.id, x.lastRun]));
    // Killed while its host ran: as that host recorded it then, with the time it did.
    expect(lastRun.get(ranHost.id)).toMatchObject({ how: 'exited', exit: { signal: 9 } });
    expect(lastRun.get(ranHost.id)!.at).toBeGreaterThanOrEqual(killedAt);
    expect(lastRun.get(ranHost.id)!.at).toBeLessThanOrEqual(seenAt);
    // Killed while none ran: found gone, with the status and time its pty host saw.
    expect(lastRun.get(noHost.id)).toMatchObject({ how: 'found-gone', exit: { signal: 9 } });
    expect(lastRun.get(noHost.id)!.at).toBeGreaterThanOrEqual(noHostKilledAt);
    // The board's log agrees: the first one's claim ended as its process exited, once, while its host ran.
    expect(host.board.logTail(50).filter((e) => e.kind === 'claim-ended')).toMatchObject([{ agentId: ranHost.id, reason: 'process-exited' }]);
  });

  it('a kept agent that calls the moment the next board host listens is answered as itself, never as an unknown secret', async () => {
    const f = folders();
    // A repository: opening fences its folder (git config runs), which is where the gap was.
    makeRepo(f.folder);
    const first = await openWith(f);
    const a = await first.host.roster.launch('shell');
    // From the agent's own shell: wait for this board host to go, then connect every millisecond and make a
    // call the moment the next one listens (as the CLI does, polling for the socket, only faster).
    // In the agent's own folder of claims: a folder it may write, contained or not (the Thread folder of a
    // repository is read-only to a contained agent).
    const mine = agentWorktreesOf(first.host.worktrees.require().names.folders, a.id);
    fs.mkdirSync(mine, { recursive: true });
    const result = join(mine, 'first-call.txt');
    const poller = join(f.folder, 'poll.pl');
    fs.writeFileSync(poller, POLL_FIRST_CALL);
    first.host.roster.relay.input(a.id, `perl '${poller}' '${result}' &\r`);
    await waitFor(() => fs.existsSync(`${result}.armed`), 10_000, 'the poller to see the board host');
    await first.host.leave();
    first.link.leave();
    await waitFor(() => fs.existsSync(`${result}.waiting`), 10_000, 'the poller to see it gone');
    const second = await openWith(f);
    await waitFor(() => fs.existsSync(result), 10_000, 'the first call after the restart');
    const answer = JSON.parse(fs.readFileSync(result, 'utf8')) as { result?: unknown; error?: { message: string } };
    expect(answer.error, `the first call after the restart: ${JSON.stringify(answer)}`).toBeUndefined();
    expect(second.host.roster.agents().map((x) => x.id)).toEqual([a.id]);
  });

  it('an agent killed inside git while no board host ran: the next one clears the git locks it left, once its process group is gone', async () => {
    const f = folders();
    makeRepo(f.folder);
    const first = await openWith(f);
    const a = await first.host.roster.launch('shell');
    const { taskId } = await claim(first.host, a.id, 'work');
    await waitFor(() => Boolean(first.host.board.state.tasks.get(taskId)?.worktree), 20_000, 'the claim folder');
    const wt = first.host.board.state.tasks.get(taskId)!.worktree!;
    // What git leaves when it is killed -9 inside `git commit`: the index's, HEAD's and the branch's locks.
    const admin = gitSync(wt.path, ['rev-parse', '--absolute-git-dir']);
    const common = gitSync(f.folder, ['rev-parse', '--absolute-git-dir']);
    const locks = [join(admin, 'index.lock'), join(admin, 'HEAD.lock'), join(common, 'refs', 'heads', `${wt.branch}.lock`)];
    for (const l of locks) fs.writeFileSync(l, '');
    await first.host.leave();
    first.link.leave();
    process.kill(-a.pid!, 'SIGKILL');
    await waitFor(() => !alive(a.pid!), 5_000, 'A to die');

    const notes: string[] = [];
    const second = await openWith(f, (m) => notes.push(m));
    expect(second.host.board.state.tasks.get(taskId)?.claim).toBeNull();
    expect(locks.filter((l) => fs.existsSync(l))).toEqual([]);
    expect(notes.join('\n')).toContain(`cleared 3 git lock(s) left by ${a.name}`);
    // The next holder commits in that branch's folder as usual.
    const b = await second.host.roster.launch('shell');
    const again = await second.host.board.run((e) => e.claim(b.id, taskId));
    expect(again.ok).toBe(true);
  });

  it('stopping its own agents leaves the pty host running for the kept agents of a Thread not open here', async () => {
    const f = folders();
    const { host, link } = await openWith(f);
    const mine = await host.roster.launch('custom', { command: 'exec sleep 300' });
    // An agent an earlier run kept for another Thread.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: f.folder, LANG: 'C.UTF-8' };
    const who = { threadKey: 'another-thread', agentId: 'kept', secretDigest: 'e'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'shell', name: 'shell 1' };
    const kept = await link.spawn('/bin/sh', ['-c', 'exec sleep 300'], { cwd: f.folder, env, cols: 80, rows: 24 }, who);
    cleanups.push(() => void (alive(kept.pid) && process.kill(kept.pid, 'SIGKILL')));
    await host.dispose();
    expect(await link.stopUnlessKept()).toBe(1);
    expect(alive(mine.pid!)).toBe(false);
    expect(alive(kept.pid) && alive(link.hostPid)).toBe(true);
    // With nothing kept, the same call ends the pty host.
    const again = await PtyHostLink.open(f.dataRoot, { idleMs: 60_000 });
    expect(again.hostPid).toBe(link.hostPid);
    process.kill(kept.pid, 'SIGKILL');
    await waitFor(() => !alive(kept.pid), 5_000, 'the kept agent to die');
    // The kernel reaps it before the pty host's exit handling runs: wait until the pty host's own listing
    // has it dead (the question stopUnlessKept asks), not only until its pid is gone.
    const listing = () => (again as unknown as { client: { request(m: 'list', p: object): Promise<Array<{ dead: boolean }>> } }).client.request('list', {});
    await waitFor(async () => (await listing()).every((l) => l.dead), 5_000, 'the pty host to see the kept agent dead');
    expect(await again.stopUnlessKept()).toBe(0);
    await waitFor(() => !alive(again.hostPid), 10_000, 'the pty host to exit');
  });
});
