import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { controlFrame, dataFrame, FrameDecoder } from '../../../src-main/ptyhost/frames.js';
import { PtyHostClient } from '../../../src-main/ptyhost/ptyHostClient.js';
import { connectPtyHost } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { forkbenchVersion, PTY_HOST_PROTOCOL, ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import type { RemotePty } from '../../../src-main/ptyhost/remotePty.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/serveProcess.js';

const roots: string[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function dataRoot(): string {
  const r = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-bad-'));
  roots.push(r);
  return r;
}

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };
const WHO = { threadKey: 'k', agentId: 'a1', secretDigest: 'd'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'shell', name: 'a1' };

/** A real pty host with one pane that answers each line it reads, its board host left, and a raw board host
 *  connection in its place that sends frames as they are. */
async function hostWithPane() {
  const root = dataRoot();
  const { client } = await connectPtyHost(root, { idleMs: 60_000 });
  const hostPid = client.hostPid;
  cleanups.push(async () => {
    try {
      process.kill(hostPid, 'SIGTERM');
    } catch {
      return; // gone
    }
    // Gone before its folder is removed: a pty host still stopping writes its log and pane records there.
    await waitFor(() => !alive(hostPid), 10_000, 'the pty host to exit').catch(() => process.kill(hostPid, 'SIGKILL'));
  });
  const pty = (await client.spawn('/bin/sh', ['-c', 'while IFS= read -r l; do echo "got:$l"; done'], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, WHO)) as RemotePty;
  client.leave();
  const sock = net.createConnection(ptyHostPaths(root).socket);
  cleanups.push(() => sock.destroy());
  const answers = new Map<number, { ok: boolean; v?: unknown; error?: string; code?: string }>();
  let output = '';
  const decoder = new FrameDecoder({
    control: (m) => {
      const a = m as { t: string; id: number };
      if (a.t === 'res') answers.set(a.id, m as never);
    },
    data: (_pane, data) => (output += data),
    malformed: () => undefined,
  });
  sock.on('data', (c) => decoder.push(c));
  let closed = false;
  sock.on('close', () => (closed = true));
  await new Promise((r) => sock.once('connect', r));
  let id = 100;
  const ask = async (m: unknown, p: unknown) => {
    const mine = id++;
    sock.write(controlFrame({ t: 'req', id: mine, m, p }));
    await waitFor(() => answers.has(mine) || closed, 5_000, `the answer to ${JSON.stringify(m)}`);
    if (closed) throw new Error('the pty host closed the connection');
    return answers.get(mine)!;
  };
  expect((await ask('hello', { version: forkbenchVersion(), protocol: PTY_HOST_PROTOCOL })).ok).toBe(true);
  return { pane: pty.pane, pid: pty.pid, hostPid, sock, ask, answer: (n: number) => answers.get(n), output: () => output, closed: () => closed };
}

describe('the pty host refuses a bad request, naming the field, and nothing else changes', () => {
  it('sizes, spawns, panes, consumers, acks and messages that are not messages', async () => {
    const h = await hostWithPane();
    const refused = async (m: unknown, p: unknown) => {
      const a = await h.ask(m, p);
      expect(a.ok, `${JSON.stringify(m)} ${JSON.stringify(p)} was carried out`).toBe(false);
      return `${a.code}: ${a.error}`;
    };
    const pane = h.pane;
    // The sizes of src-shared/terminal/terminalSize.ts, nothing past them reaches the pty or its mirror.
    expect(await refused('resize', { pane, cols: 1e9, rows: 24 })).toBe('invalid-input: resize: cols: Too big: expected number to be <=1000');
    expect(await refused('resize', { pane, cols: 80, rows: 501 })).toBe('invalid-input: resize: rows: Too big: expected number to be <=500');
    expect(await refused('resize', { pane, cols: -3, rows: 24 })).toBe('invalid-input: resize: cols: Too small: expected number to be >=2');
    expect(await refused('resize', { pane, cols: 80.5, rows: 24 })).toBe('invalid-input: resize: cols: Invalid input: expected int, received number');
    expect(await refused('resize', { pane: '1', cols: 80, rows: 24 })).toBe('invalid-input: resize: pane: Invalid input: expected number, received string');
    expect(await refused('resize', null)).toMatch(/^invalid-input: resize: pane: /);
    // A spawn's program, arguments, folder and environment are C strings for node-pty (an argument of the
    // wrong type aborted the process: every agent with it).
    const spawn = { command: '/bin/true', args: [], cwd: '/', env: {}, cols: 80, rows: 24, meta: { ...WHO, agentId: 'x', cwd: '/' } };
    expect(await refused('spawn', { ...spawn, args: [true] })).toBe('invalid-input: spawn: args.0: Invalid input: expected string, received boolean');
    expect(await refused('spawn', { ...spawn, command: 7 })).toBe('invalid-input: spawn: command: Invalid input: expected string, received number');
    expect(await refused('spawn', { ...spawn, command: 'a\0b' })).toMatch(/^invalid-input: spawn: command: holds a NUL character/);
    expect(await refused('spawn', { ...spawn, cwd: 'relative' })).toBe('invalid-input: spawn: cwd: is not an absolute folder');
    expect(await refused('spawn', { ...spawn, env: -46 })).toMatch(/^invalid-input: spawn: env: /);
    expect(await refused('spawn', { ...spawn, rows: 2 ** 32 })).toBe('invalid-input: spawn: rows: Too big: expected number to be <=500');
    expect(await refused('spawn', { ...spawn, meta: 1 })).toMatch(/^invalid-input: spawn: meta: /);
    expect(await refused('attach', { pane, consumer: { a: 1 } })).toBe('invalid-input: attach: consumer: Invalid input: expected string, received object');
    expect(await refused('screen', { pane: 999 })).toBe('no-such-pane: screen: no pane 999');
    expect(await refused('kill', { pane: 2 ** 32 })).toMatch(/^invalid-input: kill: pane: Too big/);
    expect(await refused('nonsense', {})).toBe("unknown-method: unknown method 'nonsense'");
    // Messages that are not requests: answered when they have an id, skipped when not, never acted on.
    h.sock.write(controlFrame(null));
    h.sock.write(controlFrame({ t: 'ack', pane, consumer: 'window', chars: -1e9 }));
    h.sock.write(controlFrame({ t: 'ack', pane: 'x', consumer: 7, chars: 'all' }));
    h.sock.write(Buffer.from([0, 0, 0, 3, 1, 0x7b, 0x7b])); // a control frame '{{': not JSON
    h.sock.write(controlFrame({ t: 'what', id: 5 }));
    // Frames on one connection are read in order: once this is answered, all of the above were read.
    expect((await h.ask('stats', { pane })).ok).toBe(true);
    expect(h.answer(5)).toMatchObject({ ok: false, code: 'invalid-message', error: expect.stringMatching(/^not a request of the pty host's: t: /) });
    // The pane is as it was: its size, alive, and it answers what is typed.
    const listed = (await h.ask('list', {})).v as Array<{ pane: number; cols: number; rows: number; dead: boolean }>;
    expect(listed).toEqual([expect.objectContaining({ pane, cols: 80, rows: 24, dead: false })]);
    h.sock.write(dataFrame(pane, 'still-here\r'));
    await waitFor(() => h.output().includes('got:still-here'), 10_000, 'the pane to answer');
    expect(h.closed()).toBe(false);
  });
});

/**
 * The board host's edge: a pty host that sends what it should not (a bug, a pty host of a broken build).
 * The peer here is a socket that answers as told, since a real pty host never sends these; what is under
 * test is the real PtyHostClient.
 */
describe('the board host ignores a malformed message from its pty host, and the link goes on', () => {
  it('skips bad frames and messages, fails only the request a bad answer was for, and keeps its panes', async () => {
    const dir = join(dataRoot(), 'ptyhost');
    fs.mkdirSync(dir, { mode: 0o700 });
    const socketPath = join(dir, 'pty.sock');
    let peer: net.Socket | null = null;
    const asked: Array<{ id: number; m: string }> = [];
    const srv = net.createServer((s) => {
      peer = s;
      const d = new FrameDecoder({
        control: (m) => {
          const r = m as { id: number; m: string };
          if (r.m === 'hello') s.write(controlFrame({ t: 'res', id: r.id, ok: true, v: { version: forkbenchVersion(), protocol: PTY_HOST_PROTOCOL, pid: process.pid, adopted: true } }));
          else asked.push(r);
        },
        data: () => undefined,
        malformed: () => undefined,
      });
      s.on('data', (c) => d.push(c));
    });
    await new Promise<void>((r) => srv.listen(socketPath, () => r()));
    fs.chmodSync(socketPath, 0o600);
    cleanups.push(() => srv.close());
    const client = await PtyHostClient.connect(socketPath, forkbenchVersion());
    cleanups.push(() => client.leave());
    const problems: string[] = [];
    client.onProblem.event((p) => problems.push(p));
    const send = (m: unknown) => peer!.write(controlFrame(m));
    const next = async () => waitFor(() => asked.shift(), 5_000, 'a request');

    // An answer of the wrong shape fails that request, with the reason, at once.
    const spawn = () => client.spawn('/bin/true', [], { cwd: '/', env: {}, cols: 80, rows: 24 }, WHO);
    const first = spawn();
    send({ t: 'res', id: (await next()).id, ok: true, v: { pane: 'one' } });
    await expect(first).rejects.toThrow('the pty host answered spawn with something else (pane: Invalid input: expected number, received string)');
    const second = spawn();
    send({ t: 'res', id: (await next()).id, ok: 'maybe' });
    await expect(second).rejects.toThrow(/^the pty host's answer to spawn is not an answer/);
    const third = spawn();
    send({ t: 'res', id: (await next()).id, ok: true, v: { pane: 3, pid: 999_999 } });
    const pty = (await third) as RemotePty;
    const exits: unknown[] = [];
    pty.onExit((e) => exits.push(e));
    let out = '';
    pty.onData((d) => (out += d));
    pty.onData(() => {
      throw new Error('a listener with a bug');
    });

    // Garbage of every kind, then a proper exit: only the proper exit is heard.
    peer!.write(Buffer.from([0, 0, 0, 3, 1, 0x7b, 0x7b]));
    peer!.write(Buffer.from([0, 0, 0, 2, 9, 0]));
    send(null);
    send({ t: 'exit', pane: 3, exit: null });
    send({ t: 'death', pane: '3' });
    send({ t: 'paste-mode', pane: 3, on: 'yes' });
    send({ t: 'res', id: 12_345, ok: true, v: null });
    peer!.write(dataFrame(3, 'hello'));
    send({ t: 'exit', pane: 3, exit: { exitCode: 0 } });
    await waitFor(() => exits.length === 1, 5_000, 'the proper exit');
    expect(exits).toEqual([{ exitCode: 0 }]);
    expect(out).toBe('hello');
    expect(client.isClosed).toBe(false);
    expect(problems.join('\n')).toMatch(/not JSON/);
    expect(problems.join('\n')).toMatch(/unknown kind 9/);
    expect(problems.join('\n')).toMatch(/a listener with a bug/);
    expect(problems.join('\n')).toMatch(/an answer to request 12345, which was never asked/);
    expect(problems.some((p) => p.includes('exit') && p.includes('not one of ours'))).toBe(true);
    // And the link still works.
    const stats = client.request('stats', { pane: 3 });
    send({ t: 'res', id: (await next()).id, ok: false, code: 'no-such-pane', error: 'no pane 3' });
    await expect(stats).rejects.toMatchObject({ code: 'no-such-pane', message: 'no pane 3' });
  });
});

describe('what a real pty host sends passes the board host\'s checks', () => {
  it('an exit of its own (no signal, so no signal keys on the wire) and a kill by signal', async () => {
    const root = dataRoot();
    const { client } = await connectPtyHost(root, { idleMs: 60_000 });
    cleanups.push(async () => {
      const pid = client.hostPid;
      await client.shutdown();
      // Its stop goes on after it answers (panes killed, records and socket removed, in its folder).
      await waitFor(() => !alive(pid), 10_000, 'the pty host to exit');
    });
    const own = await client.spawn('/bin/sh', ['-c', 'exit 3'], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, WHO);
    expect(await own.exited).toEqual({ exitCode: 3, signal: undefined, signalName: undefined });
    const killed = await client.spawn('/bin/sh', ['-c', 'exec sleep 100'], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, { ...WHO, agentId: 'a2' });
    process.kill(killed.pid, 'SIGKILL');
    expect(await killed.exited).toMatchObject({ signal: 9, signalName: 'SIGKILL' });
    expect((await client.list()).map((l) => l.listing.exit)).toEqual([{ exitCode: 3 }, expect.objectContaining({ signal: 9 })]);
  });
});
