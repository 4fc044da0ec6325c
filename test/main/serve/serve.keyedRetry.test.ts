import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { waitFor } from '../../helpers/pty.js';
import { servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 31: "a `note` whose answer was lost (the host killed after the write, before the answer) retried by
 * the CLI lands once". Real `serve` with its pty host, a shell agent in a pane running the real CLI. Between
 * the CLI and the agents' socket sits a proxy: when the host's answer to the note comes back — so the note is
 * in the journal, fsync'd — the test kills serve -9 and drops the CLI's connection without the answer. The
 * CLI sends the note again with its key; the proxy holds that connection until a new serve listens, which
 * answers it from the key's record in the journal. The note is on the board once.
 */
const { at, start } = servedProjectOfThisFile('fb-keyed-retry-');
const proxies: net.Server[] = [];
afterEach(async () => {
  for (const s of proxies.splice(0)) await new Promise((r) => s.close(r));
});

const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
const type = (s: ServeProc, agentId: string, line: string) => s.window.call('agent.input', { key: at.key, agentId, data: `${line}\r` });

/**
 * `node proxy.cjs HOST PROXY CONTROL`: relays the CLI's connections to the host's socket, connecting while
 * nobody listens there (a host being restarted) until one does. On its first connection, the host's first
 * answer is not relayed: the proxy tells the test ("answered"), waits until serve is dead ("killed"), then
 * closes the CLI's connection. It reports how many connections it had.
 */
const PROXY_SCRIPT = `
const net = require('node:net');
const [host, listenAt, controlAt] = process.argv.slice(2);
const control = net.createConnection(Number(controlAt), '127.0.0.1');
control.setEncoding('utf8');
let n = 0;
function connectWhenUp(cb) {
  const s = net.createConnection(host);
  s.once('connect', () => cb(s));
  s.once('error', () => setTimeout(() => connectWhenUp(cb), 100));
}
net.createServer((client) => {
  const mine = ++n;
  control.write('connections ' + n + '\\n');
  client.pause();
  connectWhenUp((up) => {
    client.pipe(up);
    client.resume();
    up.on('data', (d) => {
      if (mine > 1) return void client.write(d);
      control.write('answered\\n');
      control.once('data', () => { client.destroy(); up.destroy(); });
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
    client.on('close', () => up.destroy());
  });
}).listen(listenAt);
`;

describe('serve killed -9 after the write, before the answer', () => {
  it('the CLI sends the note again with its key, a new serve answers it from the journal, and it is on the board once', async () => {
    const first = await start();
    await first.window.call('task.add', { key: at.key, title: 'noted once' });
    const a: AgentInfo = await first.window.call('agent.launch', { key: at.key, profile: 'shell', cols: 120, rows: 30 });
    await type(first, a.id, `forkbench claim T-1 && echo "SOCK"="$FORKBENCH_SOCKET"=END`);
    await waitFor(() => /SOCK=(.+?)=END\r/.test(paneText(first, a.id)), 20_000, 'the claim and the socket path');
    const hostSocket = /SOCK=(.+?)=END\r/.exec(paneText(first, a.id))?.[1] as string;

    // The proxy runs in the agent's pane (the host takes an agent's secret only from a process in its pane),
    // and asks the test, over a control socket, to kill serve once the first answer is in.
    // The proxy's script and socket lie in the Thread folder, which a contained agent reads and writes (a Thread
    // without git); the test's own control socket is on loopback (the network stays open in a sandbox).
    const proxyPath = join(at.project, 'proxy.sock');
    const script = join(at.project, 'proxy.cjs');
    fs.writeFileSync(script, PROXY_SCRIPT);
    let connections = -1;
    let killed = false;
    const control = net.createServer((c) => {
      c.setEncoding('utf8');
      c.on('data', (d: string) => {
        for (const line of d.split('\n')) {
          if (line === 'answered') {
            first.proc.kill('SIGKILL');
            void first.exit.then(() => {
              killed = true;
              c.write('killed\n');
            });
          } else if (line.startsWith('connections ')) connections = Number(line.split(' ')[1]);
        }
      });
    });
    proxies.push(control);
    await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
    const controlPort = (control.address() as net.AddressInfo).port;
    await type(first, a.id, `node ${script} ${hostSocket} ${proxyPath} ${controlPort} & sleep 0.5; echo "PROXY"-UP`);
    await waitFor(() => paneText(first, a.id).includes('PROXY-UP\r'), 20_000, 'the proxy to start');

    await type(first, a.id, `FORKBENCH_SOCKET=${proxyPath} FORKBENCH_TIMEOUT_MS=60000 forkbench note T-1 "written once"; echo "EXIT"=$?=END`);
    await waitFor(() => killed, 20_000, 'the note to reach the host and its answer to be dropped');
    await first.exit;
    const second = await start();
    // The pane's output while the first serve was down reaches the new window from the pty host's mirror.
    await waitFor(async () => /EXIT=\d+=END/.test(await second.window.call('agent.screen', { key: at.key, agentId: a.id })), 60_000, 'the CLI to finish');
    const screen = await second.window.call('agent.screen', { key: at.key, agentId: a.id });
    expect(screen, screen).toContain("EXIT=0=END");
    expect(screen).toContain('sending it again with its key');
    await waitFor(() => connections === 2, 10_000, 'the proxy to report its connections');
    const snap = await second.window.call('thread.snapshot', { key: at.key });
    const details = await second.window.call('task.details', { key: at.key, taskId: 'T-1' });
    expect(details.notes.map((n: { text: string }) => n.text).filter((t: string) => t === 'written once')).toHaveLength(1);
    expect(snap.board.tasks.find((t: { id: string }) => t.id === 'T-1')).toBeDefined();
    expect(killed).toBe(true);
    await type(second, a.id, 'kill %1');
    second.proc.kill('SIGINT');
    await second.exit;
  }, 180_000);
});
