import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { controlFrame, dataFrame, FrameDecoder } from '../../../src-main/ptyhost/frames.js';
import { connectPtyHost } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { forkbenchVersion, PTY_HOST_PROTOCOL, ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import type { RemotePty } from '../../../src-main/ptyhost/remotePty.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Two board hosts at one pty host at the same moment (the data folder's lock bypassed: raw connections).
 * The pty host serves exactly one; the other is told it is busy and closed, and what it sends can neither
 * type into a pane nor end one. A raw greeting while a real board host is connected leaves that board host
 * (and every agent) as it was.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };
const WHO = { threadKey: 'k', agentId: 'a1', secretDigest: 'd'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'shell', name: 'a1' };
/** Rounds of a simultaneous greeting: which connection the pty host reads first varies between them. */
const ROUNDS = 12;

async function ptyHostWithPane() {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-two-'));
  const { client } = await connectPtyHost(root, { idleMs: 60_000 });
  const hostPid = client.hostPid;
  cleanups.push(() => {
    try {
      process.kill(hostPid, 'SIGTERM');
    } catch {
      // gone
    }
    fs.rmSync(root, { recursive: true, force: true });
  });
  const pty = (await client.spawn('/bin/sh', ['-c', 'while IFS= read -r l; do echo "got:$l"; done'], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, WHO)) as RemotePty;
  return { root, client, hostPid, pane: pty.pane, pid: pty.pid, pty };
}

/** A connection that speaks the frames itself, as a second board host would. */
class Raw {
  readonly sock: net.Socket;
  readonly answers = new Map<number, { ok: boolean; code?: string; error?: string; v?: unknown }>();
  output = '';
  closed = false;
  readonly connected: Promise<void>;

  constructor(socketPath: string) {
    this.sock = net.createConnection(socketPath);
    const d = new FrameDecoder({
      control: (m) => {
        const a = m as { t: string; id: number };
        if (a.t === 'res') this.answers.set(a.id, m as never);
      },
      data: (_p, data) => (this.output += data),
      malformed: () => undefined,
    });
    this.sock.on('data', (c) => d.push(c));
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => (this.closed = true));
    this.connected = new Promise((r) => this.sock.once('connect', () => r()));
  }

  hello(): Buffer {
    return controlFrame({ t: 'req', id: 1, m: 'hello', p: { version: forkbenchVersion(), protocol: PTY_HOST_PROTOCOL } });
  }

  async answer(id: number) {
    await waitFor(() => this.answers.has(id) || this.closed, 5_000, `the answer to ${id}`);
    return this.answers.get(id);
  }
}

describe('two board hosts at one pty host', () => {
  it(`greeting at the same moment (${ROUNDS} rounds): exactly one is served, the other is busy, closed, and cannot type into or end the pane`, async () => {
    const h = await ptyHostWithPane();
    h.client.leave();
    const socket = ptyHostPaths(h.root).socket;
    for (let round = 0; round < ROUNDS; round++) {
      const pair = [new Raw(socket), new Raw(socket)];
      await Promise.all(pair.map((r) => r.connected));
      // Both hellos in one turn of this loop: the pty host gets them as close together as it can.
      for (const r of pair) r.sock.write(r.hello());
      const hellos = await Promise.all(pair.map((r) => r.answer(1)));
      const served = pair.filter((_r, i) => hellos[i]?.ok);
      const refused = pair.filter((_r, i) => !hellos[i]?.ok);
      expect(served.length, `round ${round}: ${JSON.stringify(hellos)}`).toBe(1);
      expect(refused[0]!.answers.get(1)).toMatchObject({ ok: false, code: 'busy', error: expect.stringContaining('already serves a board host') });
      await waitFor(() => refused[0]!.closed, 5_000, 'the refused connection to be closed');
      // Each types a line and asks to end the pane; only the served one's line arrives.
      for (const [r, who] of [
        [refused[0]!, 'refused'],
        [served[0]!, 'served'],
      ] as const) {
        r.sock.write(Buffer.concat([dataFrame(h.pane, `from-${who}-${round}\r`), controlFrame({ t: 'req', id: 2, m: 'screen', p: { pane: h.pane } })]));
      }
      await waitFor(() => served[0]!.output.includes(`got:from-served-${round}`), 10_000, 'the served one to be heard');
      const screen = (await served[0]!.answer(2))?.v as { text: string };
      expect(screen.text).not.toContain('from-refused');
      expect(refused[0]!.answers.has(2)).toBe(false);
      expect(refused[0]!.output).toBe('');
      // It leaves: the pty host has read its end when its own end comes back.
      served[0]!.sock.end();
      await waitFor(() => served[0]!.closed, 5_000, 'the served one to leave');
    }
    // A board host of ours still gets in (the last one's leaving is seen within its busy wait) and finds the
    // pane as it was.
    const { client } = await connectPtyHost(h.root, { idleMs: 60_000 });
    cleanups.push(() => client.leave());
    const [found] = await client.list();
    expect(found?.listing).toMatchObject({ pane: h.pane, pid: h.pid, dead: false });
    await found!.pty.flushMirror();
    expect(found!.pty.serialize()).not.toContain('from-refused');
  });

  it('a raw greeting while a real board host is connected is refused, and that board host and its agent carry on', async () => {
    const h = await ptyHostWithPane();
    cleanups.push(() => h.client.leave());
    let lost = false;
    h.client.onClose.event(() => (lost = true));
    let out = '';
    h.pty.onData((d) => (out += d));
    const intruder = new Raw(ptyHostPaths(h.root).socket);
    await intruder.connected;
    intruder.sock.write(
      Buffer.concat([
        intruder.hello(),
        dataFrame(h.pane, 'intruder\r'),
        controlFrame({ t: 'req', id: 2, m: 'kill', p: { pane: h.pane } }),
        controlFrame({ t: 'req', id: 3, m: 'shutdown', p: {} }),
      ]),
    );
    expect(await intruder.answer(1)).toMatchObject({ ok: false, code: 'busy' });
    await waitFor(() => intruder.closed, 5_000, 'the intruder to be closed');
    expect(intruder.answers.has(2) || intruder.answers.has(3)).toBe(false);
    // The real board host's link is as it was: its pane answers, nothing the intruder sent arrived.
    h.pty.write('mine\r');
    await waitFor(() => out.includes('got:mine'), 10_000, 'the pane to answer its board host');
    expect(out).not.toContain('intruder');
    expect(lost || h.client.isClosed).toBe(false);
    expect((await h.client.list()).map((l) => l.listing.dead)).toEqual([false]);
  });
});
