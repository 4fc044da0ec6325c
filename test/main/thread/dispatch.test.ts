import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { DISPATCH_ACTOR } from '../../../src-shared/board/dispatch.js';
import type { WhyView } from '../../../src-shared/board/why.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { cliAs } from '../../helpers/gitFixture.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 34, dispatch to idle agents, with real shell agents: bash in real ptys, idle by their prompt marks
 * (the terminal's signal, not a guess from silence), each with a worker of its own started by its `.profile`
 * that does what an agent does through the real `forkbench` CLI: turns dispatch on for itself, and works on
 * (notes, says done) whatever task it holds. No one claims anything: the board gives each task to an idle
 * agent and shows it the assignment in its pane, as a person's drag would.
 */
// Its tests ask `forkbench why` with an agent's secret from the test process, outside any pane.
const hosts = hostFixture('dispatch', { peerJudge: secretsFromTheTestProcess });
const homes: string[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  await hosts.cleanup();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

/**
 * The worker an agent's shell starts in the background: `forkbench dispatch on` (with `labels`), then every
 * 200 ms the board, and a note and `done` for each task it holds that is claimed. It leaves when its shell
 * goes or the board stops answering.
 */
const WORKER = `
import { execFileSync } from 'node:child_process';
const fb = (...args) => execFileSync('forkbench', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const me = process.env.FORKBENCH_AGENT_ID;
const shell = Number(process.env.WORKER_SHELL);
const shellAlive = () => { try { process.kill(shell, 0); return true; } catch { return false; } };
fb('dispatch', 'on', '--labels', process.env.WORKER_LABELS ?? '');
const finished = new Set();
for (;;) {
  if (!shellAlive()) process.exit(0);
  let board;
  try { board = JSON.parse(fb('board', '--json')).result; } catch { process.exit(0); }
  for (const t of board.tasks) {
    if (t.state !== 'claimed' || t.claim?.agentId !== me || finished.has(t.claim.token)) continue;
    finished.add(t.claim.token);
    fb('note', t.id, 'worked on by ' + me, '--token', String(t.claim.token));
    fb('done', t.id, '--token', String(t.claim.token), '--note', 'finished');
  }
  await new Promise((r) => setTimeout(r, 200));
}
`;

/** A host whose shells are bash with a home of the test's, whose first prompt starts the worker (when
 *  `worker`): by then the shell's start-up has put `forkbench` first on its PATH. */
async function openHost(o: { worker: boolean; labels?: string }): Promise<ThreadHost> {
  const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-dispatch-home-'));
  homes.push(home);
  fs.writeFileSync(join(home, 'worker.mjs'), WORKER);
  // Its log goes to the Thread folder (the shell's starting folder), which a contained agent writes in a
  // Thread without git; the home is read-only to it.
  const run = `( WORKER_SHELL=$$ ${JSON.stringify(process.execPath)} "$HOME/worker.mjs" >>"$WORKER_LOGS/worker-$FORKBENCH_AGENT_ID.log" 2>&1 & )`;
  const start = o.worker ? `WORKER_LOGS=$PWD\nPROMPT_COMMAND='[ -n "$WORKER_STARTED" ] || { WORKER_STARTED=1; ${run.replace(/'/g, `'\\''`)}; }'\n` : '';
  const vars = makeHome(home, { '.profile': `PS1='$ '\n${start}` });
  return hosts.open({ env: { PATH: process.env.PATH, SHELL: '/bin/bash', LANG: 'C.UTF-8', WORKER_LABELS: o.labels ?? '', ...vars } });
}

const idle = (host: ThreadHost, id: string) => host.states.info(id)?.state === 'idle';

describe('dispatch to idle agents', () => {
  it('three tasks in a chain and two dispatching shells: each is given to an idle one in order, and finishes with no action of the person but approvals', async () => {
    const host = await openHost({ worker: true });
    const { board } = host;
    const events: BoardEvent[] = [];
    board.onEvent((e) => events.push(e));
    await board.run((e) => e.addTask({ title: 'schema' }));
    await board.run((e) => e.addTask({ title: 'api' }, 'user', ['T-1']));
    await board.run((e) => e.addTask({ title: 'ui' }, 'user', ['T-2']));
    const panes: Record<string, string> = {};
    host.roster.relay.onData.event(({ agentId, data }) => (panes[agentId] = (panes[agentId] ?? '') + data));
    const a = await host.roster.launch('shell');
    const b = await host.roster.launch('shell');
    const personFrom = events.length;

    for (const id of ['T-1', 'T-2', 'T-3']) {
      // The person's one action: approving what comes to review.
      await waitFor(() => board.state.tasks.get(id)?.state === "review", 30_000, `${id} to reach review`).catch((err: Error) => {
        const logs = fs.readdirSync(host.folder).filter((f) => f.startsWith("worker-")).map((f) => `${f}: ${fs.readFileSync(join(host.folder, f), "utf8")}`);
        throw new Error(`${err.message}; states ${JSON.stringify([...board.state.tasks.values()].map((t) => [t.id, t.state, t.claim?.agentId]))}; agents ${JSON.stringify(host.states.views())}; worker logs: ${logs.join(" | ")}`);
      });
      expect((await board.run((e) => e.approve(id))).ok).toBe(true);
    }
    expect([...board.state.tasks.values()].map((t) => t.state)).toEqual(['done', 'done', 'done']);

    const grants = events.filter((e): e is Extract<BoardEvent, { kind: 'grant' }> => e.kind === 'grant');
    expect(grants.map((g) => [g.taskId, g.by])).toEqual([
      ['T-1', DISPATCH_ACTOR],
      ['T-2', DISPATCH_ACTOR],
      ['T-3', DISPATCH_ACTOR],
    ]);
    // Each was granted only after the one it waits on was approved, to an agent that held nothing then.
    for (const g of grants.slice(1)) {
      const waited = g.taskId === 'T-2' ? 'T-1' : 'T-2';
      const approved = events.find((e) => e.kind === 'approved' && e.taskId === waited);
      expect(approved && approved.seq < g.seq, `${g.taskId} granted before ${waited} was approved`).toBe(true);
    }
    expect(new Set(grants.map((g) => g.agentId)).size).toBeGreaterThanOrEqual(1);
    for (const g of grants) expect([a.id, b.id]).toContain(g.agentId);
    // The person's only writes after the agents came: the approvals.
    const byPerson = events.slice(personFrom).filter((e) => 'by' in e && e.by === 'user');
    expect(byPerson.map((e) => e.kind)).toEqual(['approved', 'approved', 'approved']);
    // Each agent turned dispatch on itself, through the CLI.
    expect(events.filter((e) => e.kind === 'dispatch-set').map((e) => [(e as { agentId: string }).agentId, (e as { by: string }).by]).sort()).toEqual([[a.id, a.id], [b.id, b.id]].sort());
    // The assignment reached each grantee's pane as a drag's does (a shell is shown it, never typed it).
    for (const g of grants) {
      await waitFor(() => (panes[g.agentId] ?? '').includes(`Forkbench: You have been assigned ${g.taskId} `), 10_000, `${g.taskId}'s assignment in its pane`);
    }
  }, 120_000);

  it('forkbench why: dispatch off, no idle agent matches (labels), backing off from an agent for N s', async () => {
    const host = await openHost({ worker: false });
    const { board } = host;
    const a = await host.roster.launch('shell');
    await waitFor(() => idle(host, a.id), 20_000, 'the shell to be idle');
    const why = async (id: string): Promise<WhyView> => {
      const r = await cliAs(host, a.id, ['why', id]);
      expect(r.code, JSON.stringify(r.out)).toBe(0);
      return r.out.result as WhyView;
    };
    const reason = (w: WhyView, code: string) => w.reasons.find((r) => r.code === code)?.text;

    // An agent adds the task through the CLI, naming who may take it; a name that is none is refused.
    const bad = await cliAs(host, a.id, ['add', 'front end work', '--for', 'label:front@end']);
    expect(bad.out.error?.message).toContain("'label:front@end' names no profile or label");
    expect(board.state.tasks.size).toBe(0);
    const added = await cliAs(host, a.id, ['add', 'front end work', '--for', 'Label:frontend']);
    expect(added.out.result).toMatchObject({ id: 'T-1', for: ['label:frontend'] });
    // No agent takes tasks when idle.
    let w = await why('T-1');
    expect(w.reasons.map((r) => r.code)).toEqual(['ready', 'dispatch-off']);
    expect(reason(w, 'dispatch-off')).toBe('dispatch is off: no agent takes the next ready task when idle, so T-1 waits for someone to claim it');

    // The shell takes tasks when idle, but it has no frontend label: nothing is granted, and why says so.
    expect((await cliAs(host, a.id, ['dispatch', 'on', '--labels', 'backend'])).out.result).toMatchObject({ mode: 'on', labels: ['backend'], on: true });
    w = await why('T-1');
    expect(w.reasons.map((r) => r.code)).toEqual(['ready', 'no-idle-match']);
    expect(reason(w, 'no-idle-match')).toBe(`no idle agent matches (label:frontend): the agents that take tasks when idle are ${a.name} (idle; labels backend)`);
    expect(board.state.tasks.get('T-1')?.claim).toBeNull();

    // With the label, the idle shell is given it at once; it gives it up, and is kept from it for 30 s.
    await cliAs(host, a.id, ['dispatch', 'on', '--labels', 'backend,frontend']);
    await waitFor(() => board.state.tasks.get('T-1')?.claim?.agentId === a.id, 10_000, 'T-1 to be dispatched to the shell');
    const token = board.state.tasks.get('T-1')!.claim!.token;
    expect((await cliAs(host, a.id, ['release', 'T-1', '--token', String(token)])).code).toBe(0);
    w = await why('T-1');
    expect(w.reasons.map((r) => r.code)).toEqual(['ready', 'backing-off', 'no-idle-match']);
    expect(reason(w, 'backing-off')).toMatch(new RegExp(`^T-1 is backing off from ${a.name} for (30|29|28) s \\(it gave it up 1 time\\)$`));
    expect(board.state.tasks.get('T-1')?.claim).toBeNull();
    // needs-attention after lapses is its own reason (item 1's), still said the same way.
    expect(w.state).toBe('open');
  }, 60_000);
});
