import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { controlFrame, dataFrame, FrameDecoder } from '../../../src-main/ptyhost/frames.js';
import { PtyHostClient } from '../../../src-main/ptyhost/ptyHostClient.js';
import { forkbenchVersion, PTY_HOST_PROTOCOL, type ClientMessage } from '../../../src-main/ptyhost/protocol.js';
import { ensurePrivateDir } from '../../../src-main/ptyhost/socketChecks.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * The order the board host hears its pty host in. A pty host answers a `screen` request and then sends the
 * pane's next output; both often arrive in one socket read. The code awaiting the answer (the window's
 * screen reply) must run before that output is delivered, or the window gets the output first and drops it
 * as already inside the screen (the page's restore), losing it for good.
 *
 * The pty host here is a scripted peer on a real socket, so the two frames are written in one write every
 * time; what is tested is the real client.
 */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A peer that answers hello and spawn, and answers `screen` with the screen and, in the same write,
 *  `after`; with `thenGo`, it closes the connection with that write. */
async function scriptedHost(after: Buffer, thenGo = false): Promise<{ socket: string; child: ChildProcess }> {
  const dir = join(fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-order-')), 'ptyhost');
  ensurePrivateDir(dir);
  const socket = join(dir, 'pty.sock');
  // A real process for the pane's pid: its own group, so nothing else is signalled if the client kills it.
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  const srv = net.createServer((s) => {
    const decoder = new FrameDecoder({
      control: (m) => {
        const msg = m as ClientMessage;
        if (msg.t !== 'req') return;
        const res = (v: unknown) => controlFrame({ t: 'res', id: msg.id, ok: true, v });
        if (msg.m === 'hello') s.write(res({ version: forkbenchVersion(), protocol: PTY_HOST_PROTOCOL, pid: process.pid, adopted: true }));
        else if (msg.m === 'spawn') s.write(res({ pane: 7, pid: child.pid }));
        else if (msg.m === 'screen') {
          const both = Buffer.concat([res({ text: 'SCREEN', bracketedPaste: false }), after]);
          if (thenGo) s.end(both);
          else s.write(both);
        }
        else s.write(res(null));
      },
      data: () => undefined,
      malformed: () => undefined,
    });
    s.on('data', (c) => decoder.push(c));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => srv.listen(socket, () => resolve()));
  fs.chmodSync(socket, 0o600);
  cleanups.push(() => {
    srv.close();
    child.kill('SIGKILL');
    fs.rmSync(dirname(dir), { recursive: true, force: true });
  });
  return { socket, child };
}

describe('the board host hears its pty host in order', () => {
  it("a screen's answer is acted on before the output sent after it, even when both come in one read", async () => {
    const { socket } = await scriptedHost(Buffer.concat([dataFrame(7, 'output after the screen'), controlFrame({ t: 'paste-mode', pane: 7, on: true })]));
    const client = await PtyHostClient.connect(socket, forkbenchVersion());
    cleanups.push(() => client.leave());
    const pty = await client.spawn('sh', [], { cwd: tmpdir(), env: {}, cols: 80, rows: 24 }, { threadKey: 'k', agentId: 'a', secretDigest: 'd'.repeat(64), socketPath: '/nowhere', profile: 'shell', name: 'a' });
    const heard: string[] = [];
    pty.onData((d) => heard.push(`data: ${d}`));
    // As the window's screen request does: await the screen, then (a few promise steps on) reply with it.
    const replied = (async () => {
      await pty.flushMirror();
      await Promise.resolve();
      await Promise.resolve();
      heard.push(`screen: ${pty.serialize()}`);
    })();
    await replied;
    await waitFor(() => heard.length >= 2, 5_000, 'the output behind the screen');
    expect(heard).toEqual(['screen: SCREEN', 'data: output after the screen']);
    // What came behind the output is still heard, in order: bracketed paste now on.
    expect(pty.asPaste('x')).toBe('\x1b[200~x\x1b[201~');
  });

  it("a pane's exit behind an answer is heard as its exit when the pty host goes with the same write", async () => {
    const { socket } = await scriptedHost(controlFrame({ t: 'exit', pane: 7, exit: { exitCode: 3, signal: 0 } }), true);
    const client = await PtyHostClient.connect(socket, forkbenchVersion());
    cleanups.push(() => client.leave());
    const pty = await client.spawn('sh', [], { cwd: tmpdir(), env: {}, cols: 80, rows: 24 }, { threadKey: 'k', agentId: 'a', secretDigest: 'd'.repeat(64), socketPath: '/nowhere', profile: 'shell', name: 'a' });
    const exit = new Promise((resolve) => pty.onExit(resolve));
    await pty.flushMirror();
    // The exit it reported, not the one a pty host lost without a word gets (SIGKILL, lost).
    expect(await exit).toMatchObject({ exitCode: 3 });
    expect(pty.lost).toBe(false);
  });
});
