import * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AppController } from '../../../src-renderer/state/controller.js';
import { WsTransport, type SocketLike } from '../../../src-renderer/transport/wsTransport.js';
import { waitFor } from '../../helpers/pty.js';
import { servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 31, item 4: "the window per action". The page's own client (its controller, board actions and
 * WebSocket transport, as the browser runs them) against a real `serve`, through a proxy that can lose an
 * answer: once the host has taken the page's "add task" (the task is on the board, as another window sees),
 * the proxy cuts the page's connection before the host's answer reaches it. The page reconnects, sends the
 * same write again with its key, and is answered with the first outcome: the action succeeds, once.
 */
const { at, start } = servedProjectOfThisFile('fb-window-resend-');
const closers: Array<() => void> = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/**
 * A TCP proxy to serve. While `holding`, nothing the host sends on the first connection is passed on (the
 * answer to the write, and any push, are lost with it); `cutFirst` then ends that connection. Every later
 * connection is relayed whole.
 */
async function lossyProxy(s: ServeProc) {
  let connections = 0;
  let holding = false;
  let cutFirst = () => undefined as void;
  const server = net.createServer((client) => {
    const n = ++connections;
    const up = net.connect(s.served.port, '127.0.0.1');
    client.on('data', (d) => up.write(d));
    up.on('data', (d) => {
      if (!(n === 1 && holding)) client.write(d);
    });
    const end = () => {
      client.destroy();
      up.destroy();
    };
    client.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
    if (n === 1) cutFirst = end;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    hold: () => (holding = true),
    cut: () => cutFirst(),
  };
}

describe("the page's write whose answer its connection lost", () => {
  it('is sent again with its key once reconnected, and the task is added once', async () => {
    const s = await start();
    const proxy = await lossyProxy(s);
    const { host, port, cookie } = s.served;
    // The page's socket, to the proxy, with what the browser would send to serve itself.
    const createSocket = () =>
      new WebSocket(`ws://127.0.0.1:${proxy.port}/ws`, { headers: { Host: `${host}:${port}`, Origin: `http://${host}:${port}`, Cookie: cookie } }) as unknown as SocketLike;
    const transport = new WsTransport({ url: 'ws://proxied/ws', createSocket });
    const page = new AppController(transport, { initialThread: at.key, systemNotify: () => true, notifyPermission: () => 'granted' });
    closers.push(() => (page.dispose(), transport.dispose()));
    page.start();
    await waitFor(() => page.state.activeKey === at.key && page.state.board !== null, 20_000, 'the page to show the Thread');

    proxy.hold();
    const added = page.actions.addTask('added once though its answer was lost');
    const onBoard = async () => (await s.window.call('thread.snapshot', { key: at.key })).board.tasks.filter((t) => t.title === 'added once though its answer was lost');
    await waitFor(async () => (await onBoard()).length > 0, 20_000, 'the host to take the write');
    proxy.cut();

    expect(await added).toBe(true);
    expect(page.state.errors).toEqual([]);
    expect(proxy.connections()).toBe(2);
    expect(await onBoard()).toHaveLength(1);
    // The page's board, fetched again on reconnect, has it once too.
    const mine = () => [...(page.state.board?.tasks.values() ?? [])].filter((t) => t.title === 'added once though its answer was lost');
    await waitFor(() => mine().length > 0, 10_000, "the task on the page's board");
    expect(mine()).toHaveLength(1);
    s.proc.kill('SIGINT');
    await s.exit;
  }, 120_000);
});
