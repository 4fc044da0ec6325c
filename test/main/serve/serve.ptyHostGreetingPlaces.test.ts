import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { PtyHostServerConstants } from '../../../src-main/ptyhost/ptyHostServer.js';
import { ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 42, finding 6: an agent that holds every greeting place of the pty host (connections that never say
 * hello, each opened again as soon as it is closed) made a restarted serve exit "the pty host is gone" while
 * the agent lived. A real agent's shell runs the holder; serve is killed -9 and started again. Its agents run
 * uncontained (`--uncontained all`): a contained agent cannot reach the pty host's socket at all (the data
 * folder is hidden from it: containedPanes.test), so only an uncontained one can make this attack.
 */
const { at, start } = servedProjectOfThisFile('fb-greeting-places-');
const UNCONTAINED = ['--uncontained', 'all'];

/** Keeps N silent connections to the pty host's socket, each opened again 50 ms after it closes; writes how
 *  many it held at once, and how many times one of them was closed. */
const HOLDER = String.raw`
const net = require('node:net');
const fs = require('node:fs');
const [socket, status, n] = [process.argv[2], process.argv[3], Number(process.argv[4])];
let open = 0, most = 0, closed = 0;
const say = () => { fs.writeFileSync(status + '.tmp', JSON.stringify({ open, most, closed })); fs.renameSync(status + '.tmp', status); };
const hold = () => {
  const c = net.createConnection(socket);
  let connected = false;
  c.on('connect', () => { connected = true; open++; most = Math.max(most, open); say(); });
  c.on('error', () => undefined);
  c.on('close', () => { if (connected) open--; closed++; say(); setTimeout(hold, 50); });
};
for (let i = 0; i < n; i++) hold();
`;

const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
const type = (s: ServeProc, agentId: string, line: string) => s.window.call('agent.input', { key: at.key, agentId, data: `${line}\r` });

describe("the pty host's greeting places", () => {
  it('an agent holding all of them with silent connections does not keep a restarted serve out: it adopts both agents', async () => {
    const { root, key } = at;
    const paths = ptyHostPaths(join(root, 'data'));
    const holder = join(root, 'holder.cjs');
    const status = join(root, 'holder.json');
    fs.writeFileSync(holder, HOLDER);
    const first = await start({ args: UNCONTAINED });
    const a: AgentInfo = await first.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    const b: AgentInfo = await first.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    await type(first, a.id, 'echo "READY"-A');
    await waitFor(() => paneText(first, a.id).includes('READY-A'), 20_000, 'A ready');
    await type(first, a.id, `node '${holder}' '${paths.socket}' '${status}' ${PtyHostServerConstants.maxUnadopted}`);
    const read = () => (fs.existsSync(status) ? (JSON.parse(fs.readFileSync(status, 'utf8')) as { open: number; most: number; closed: number }) : null);
    await waitFor(() => (read()?.open ?? 0) >= PtyHostServerConstants.maxUnadopted, 20_000, 'the holder to hold every place');
    first.proc.kill('SIGKILL');
    await first.exit;
    // Every place is still held, by connections that never greet.
    expect(read()?.open).toBe(PtyHostServerConstants.maxUnadopted);
    const second = await start({ args: UNCONTAINED });
    await waitFor(async () => (await second.window.call('thread.snapshot', { key })).agents.filter((x: AgentInfo) => x.status !== 'exited').length === 2, 20_000, 'both agents adopted');
    expect(fs.readFileSync(paths.log, 'utf8')).toMatch(/closed a connection that had not greeted to make room/);
    expect(alive(a.pid!) && alive(b.pid!)).toBe(true);
    await type(second, b.id, 'echo "STILL"-B');
    await waitFor(() => paneText(second, b.id).includes('STILL-B'), 20_000, 'B answers through the new serve');
  }, 120_000);
});
