/**
 * Issue 20: after a restart, new agents were numbered from "shell 1" again (shells and custom commands keep
 * no record of their own), clashing with the names already in the event log. A real host with real ptys,
 * closed and opened anew on the same data folder, names the next shell after the last one it ever named.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { AgentNumbers, numberInName } from '../../../src-main/roster/agentNumbers.js';
import { STORE_FILE_MODE } from '../../../src-main/roster/agentStore.js';
import { ensureBuilt } from '../../helpers/cli.js';

const roots: string[] = [];
const managers: ThreadManager[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  for (const d of roots.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-numbers-'));
  roots.push(root);
  const folder = join(root, 'project');
  fs.mkdirSync(folder);
  const warnings: string[] = [];
  const manager = () => {
    const m = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, env: { PATH: process.env.PATH, HOME: root, LANG: 'C.UTF-8' }, warn: (w) => warnings.push(w) });
    managers.push(m);
    return m;
  };
  const restart = async (m: ThreadManager) => {
    await m.dispose();
    managers.splice(managers.indexOf(m), 1);
    const next = manager();
    return { threads: next, host: await next.open(folder) };
  };
  const numbersFile = join(root, 'data', 'threads', threadKeyOf(folder), 'agent-numbers.json');
  return { folder, manager, restart, warnings, numbersFile };
}

describe('agent names across a host restart', () => {
  it('a shell launched after a restart is "shell N+1", and custom commands count on too', async () => {
    const { folder, manager, restart, warnings, numbersFile } = setup();
    const threads = manager();
    let host = await threads.open(folder);
    const first = await host.roster.launch('shell');
    const second = await host.roster.launch('shell');
    const custom = await host.roster.launch('custom', { command: 'sleep 30' });
    expect([first.name, second.name, custom.name]).toEqual(['shell 1', 'shell 2', 'custom 1']);
    // the person closes shell 2: its name is still in the log, so it is not given out again
    await host.roster.close(second.id);

    ({ host } = await restart(threads));
    // the ones the stop ended are listed as ended (the closed one is not), and their numbers are remembered
    expect(host.roster.agents().map((a) => [a.name, a.status, a.lastRun?.how])).toEqual([
      ['shell 1', 'exited', 'host-stopped'],
      ['custom 1', 'exited', 'host-stopped'],
    ]);
    const third = await host.roster.launch('shell');
    const custom2 = await host.roster.launch('custom', { command: 'sleep 30' });
    expect(third.name).toBe('shell 3');
    expect(custom2.name).toBe('custom 2');
    expect(fs.statSync(numbersFile).mode & 0o777).toBe(STORE_FILE_MODE);
    expect(warnings).toEqual([]);
  }, 60_000);

  it('a damaged numbers file is set aside with a message, and names go on after the agents on record', async () => {
    const { folder, manager, restart, warnings, numbersFile } = setup();
    const threads = manager();
    let host = await threads.open(folder);
    await host.roster.launch('shell');
    ({ host } = await restart(threads));
    const again = await host.roster.launch('shell');
    expect(again.name).toBe('shell 2');
    const m = managers.at(-1)!;
    fs.writeFileSync(numbersFile, '{"version":1,"last":{"shell":');
    ({ host } = await restart(m));
    expect(warnings.join('\n')).toMatch(/agent numbers in .*agent-numbers\.json are damaged \(not JSON.*kept as .*corrupt-\d+/);
    // shells are on record (shell 1 and shell 2, listed as ended): the numbering goes on after them
    expect((await host.roster.launch('shell')).name).toBe('shell 3');
  }, 60_000);
});

describe('AgentNumbers', () => {
  it('counts each profile on from the highest name seen, and keeps it in the file', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'agent-numbers-'));
    roots.push(dir);
    const path = join(dir, 'thread', 'agent-numbers.json');
    const n = AgentNumbers.open(path);
    n.saw('claude', 'claude 4');
    n.saw('claude', 'claude 2');
    n.saw('custom', 'my build');
    expect(n.next('claude')).toBe(5);
    expect(n.next('shell')).toBe(1);
    const reopened = AgentNumbers.open(path);
    expect([reopened.lastOf('claude'), reopened.lastOf('shell'), reopened.lastOf('custom')]).toEqual([5, 1, 0]);
    expect(numberInName('shell 12')).toBe(12);
    expect(numberInName('shell')).toBe(0);
  });

  it('a file of the wrong shape is set aside, not trusted', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'agent-numbers-'));
    roots.push(dir);
    const path = join(dir, 'agent-numbers.json');
    fs.writeFileSync(path, JSON.stringify({ version: 1, last: { shell: -3 } }));
    const said: string[] = [];
    const n = AgentNumbers.open(path, (w) => said.push(w), () => 42);
    expect(n.lastOf('shell')).toBe(0);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('last.shell');
    expect(fs.existsSync(`${path}.corrupt-42`)).toBe(true);
  });
});
