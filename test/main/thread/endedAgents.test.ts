/**
 * Issue 44, item 4: the next run's list of agents the last run ended tells each one's true cause and the
 * titles of what it held, as it ended. Real shells in real ptys under a real ThreadManager, closed and
 * opened again as a host restart does: an agent killed -9 while the host ran, one that exited by itself
 * (`exit 3`), one killed the moment before the stop, and one the stop itself ended. The stop used to write
 * "ended when the host stopped" over every agent whose pane it still had, and the window named held tasks
 * by the board on screen, whose task under that id may be another (a board switch) or renamed since.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { ensureBuilt } from '../../helpers/cli.js';

const roots: string[] = [];
const managers: ThreadManager[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  for (const d of roots.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-ended-'));
  roots.push(root);
  const folder = join(root, 'project');
  const home = join(root, 'home');
  for (const d of [folder, home]) fs.mkdirSync(d);
  const manager = () => {
    const m = new ThreadManager({
      dataRoot: join(root, 'data'),
      runtimeRoot: join(root, 'run'),
      liveness: false,
      env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' },
    });
    managers.push(m);
    return m;
  };
  return { folder, manager };
}

/** Resolves once the roster lists `agentId` as exited: its death is known (its exit status may follow). */
function untilDead(host: ThreadHost, agentId: string): Promise<void> {
  return new Promise((resolve) => {
    const sub = host.roster.onAgents.event((list) => {
      if (list.find((a) => a.id === agentId)?.status === 'exited') {
        sub.dispose();
        resolve();
      }
    });
  });
}

/** Resolves once the agent's exit status is in (after its death and its output's tail). */
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

const SIGKILL = 9;

describe('the agents the last run ended, as the next run lists them', () => {
  it('each with the cause it ended by (killed, exited, killed as the stop came, the stop) and the titles it held then', async () => {
    const { folder, manager } = setup();
    let threads = manager();
    let host = await threads.open(folder);
    const titles = ['Port the parser', 'Write the changelog', 'Fix the docs', 'Tidy the tests'];
    for (const title of titles) await host.board.run((e) => e.addTask({ title }));
    const killed = await host.roster.launch('shell');
    const exited = await host.roster.launch('shell');
    const lastMoment = await host.roster.launch('custom', { command: 'exec sh -i' });
    const stopped = await host.roster.launch('shell');
    for (const [i, a] of [killed, exited, lastMoment, stopped].entries()) await host.board.run((e) => e.assign(`T-${i + 1}`, a.id));

    // Killed while the host runs: its claim ends with it.
    const killedGone = untilExited(host, killed.id);
    process.kill(-killed.pid!, 'SIGKILL');
    await killedGone;
    // Exits by itself, with a status of its own.
    const exitedGone = untilExited(host, exited.id);
    host.roster.relay.input(exited.id, 'exit 3\r');
    await exitedGone;
    // The tasks it held change afterwards: the record keeps them as they were when it ended.
    await host.board.run((e) => e.editTask('T-1', { title: 'Renamed after its holder was killed' }));
    // Killed, and the host stopped as soon as its death was known (its exit status not waited for).
    const lastDead = untilDead(host, lastMoment.id);
    process.kill(-lastMoment.pid!, 'SIGKILL');
    await lastDead;
    await threads.dispose();
    managers.splice(managers.indexOf(threads), 1);

    threads = manager();
    host = await threads.open(folder);
    const lastRun = (a: AgentInfo) => host.roster.agents().find((b) => b.id === a.id)?.lastRun;
    expect(lastRun(killed)).toEqual({ how: 'exited', held: ['T-1'], titles: { 'T-1': 'Port the parser' }, exit: { code: expect.any(Number), signal: SIGKILL }, at: expect.any(Number) });
    expect(lastRun(exited)).toEqual({ how: 'exited', held: ['T-2'], titles: { 'T-2': 'Write the changelog' }, exit: { code: 3, signal: null }, at: expect.any(Number) });
    expect(lastRun(lastMoment)).toEqual({ how: 'exited', held: ['T-3'], titles: { 'T-3': 'Fix the docs' }, exit: { code: expect.any(Number), signal: SIGKILL }, at: expect.any(Number) });
    expect(lastRun(stopped)).toEqual({ how: 'host-stopped', held: ['T-4'], titles: { 'T-4': 'Tidy the tests' }, exit: null, at: expect.any(Number) });
    // The board on screen now has another title under T-1; the list still says what the agent held.
    expect(host.board.state.tasks.get('T-1')?.title).toBe('Renamed after its holder was killed');
  }, 60_000);
});
