import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PaneIdentity } from '../../../src-main/pty/paneSession.js';
import { controlFrame } from '../../../src-main/ptyhost/frames.js';
import { PtyHostClient, PtyHostVersionError } from '../../../src-main/ptyhost/ptyHostClient.js';
import { secretDigestOf } from '../../../src-main/agents/agent.js';
import { connectPtyHost } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { forkbenchVersion, PTY_HOST_PROTOCOL, ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import type { RemotePty } from '../../../src-main/ptyhost/remotePty.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/processes.js';
import { ptyHostsOfThisFile } from '../../helpers/ptyHosts.js';

const { dataRoot, connect, endAfterTest } = ptyHostsOfThisFile();

const who = (agentId: string): PaneIdentity => ({
  threadKey: 'k1',
  agentId,
  secretDigest: secretDigestOf(`secret-of-${agentId}`),
  socketPath: '/tmp/nowhere.sock',
  profile: 'shell',
  name: agentId,
});
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };

async function shellPane(client: PtyHostClient, id: string, script: string): Promise<{ pty: RemotePty; out: () => string }> {
  const pty = (await client.spawn('/bin/sh', ['-c', script], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, who(id))) as RemotePty;
  let out = '';
  pty.onData((d) => (out += d));
  return { pty, out: () => out };
}

describe('the pty host process', () => {
  it('starts detached on an owner-only socket, keeps panes across board host connections, secrets only in memory', async () => {
    const root = dataRoot();
    const first = await connect(root);
    expect(first.started).toBe(true);
    const paths = ptyHostPaths(root);
    expect(fs.statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(paths.socket).mode & 0o777).toBe(0o600);
    const a = await shellPane(first.client, 'a1', 'echo hello-from-a; exec sleep 100');
    await waitFor(() => a.out().includes('hello-from-a'), 5000, 'output');
    // The board host leaves (as after kill -9: nothing said); the pane keeps running.
    first.client.leave();
    const second = await connect(root);
    expect(second.started).toBe(false);
    expect(second.client.hostPid).toBe(first.client.hostPid);
    const listed = await second.client.list();
    expect(listed.map((l) => [l.listing.meta.agentId, l.listing.pid, l.listing.dead])).toEqual([['a1', a.pty.pid, false]]);
    expect(listed[0]!.listing.meta.secretDigest).toBe(who('a1').secretDigest);
    expect(alive(a.pty.pid)).toBe(true);
    const again = listed[0]!.pty;
    await again.flushMirror();
    expect(again.serialize()).toContain('hello-from-a');
    // Input reaches the pane through the new connection.
    let out = '';
    again.onData((d) => (out += d));
    const b = await shellPane(second.client, 'b1', 'read line; echo "got:$line"; exec sleep 100');
    b.pty.write('typed\r');
    await waitFor(() => b.out().includes('got:typed'), 5000, 'echo of input');
    // Nothing in the data folder holds an agent's secret.
    for (const f of fs.readdirSync(paths.dir)) {
      if (f.endsWith('.sock')) continue;
      expect(fs.readFileSync(join(paths.dir, f), 'utf8')).not.toContain('secret-of-');
    }
    await second.client.shutdown();
    await waitFor(() => !alive(second.client.hostPid) && !alive(a.pty.pid) && !alive(b.pty.pid), 10_000, 'shutdown to end pty host and agents');
    expect(fs.existsSync(paths.socket)).toBe(false);
  });

  it("a pane's first output, read together with the answer to its spawn, reaches the spawner's listener", async () => {
    const root = dataRoot();
    const { client } = await connect(root);
    const marker = join(root, 'printed');
    const spawning = client.spawn('/bin/sh', ['-c', `echo FIRST-WORDS; touch ${marker}; exec sleep 100`], { cwd: tmpdir(), env: ENV, cols: 80, rows: 24 }, who('first'));
    // Hold this event loop until the child has printed, and a little past the pty host's 5 ms output batch:
    // its answer and the first output then wait in the socket to be read at once.
    while (!fs.existsSync(marker)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    const pty = (await spawning) as RemotePty;
    let out = '';
    pty.onData((d) => (out += d));
    await waitFor(() => out.includes('FIRST-WORDS'), 5000, 'the first output');
  });

  it('kill -9 of the pty host ends every pane at once, reported as lost', async () => {
    const root = dataRoot();
    const { client } = await connect(root);
    const panes = await Promise.all([shellPane(client, 'x', 'exec sleep 100'), shellPane(client, 'y', 'trap "" HUP; while :; do sleep 1; done')]);
    const exits = panes.map((p) => new Promise<number>((resolve) => p.pty.onExit(() => resolve(performance.now()))));
    const t0 = performance.now();
    process.kill(client.hostPid, 'SIGKILL');
    const at = await Promise.all(exits);
    for (const p of panes) expect(p.pty.lost).toBe(true);
    expect(Math.max(...at) - t0).toBeLessThan(1000);
    // Even the one that ignores SIGHUP is gone: its group was killed.
    await waitFor(() => panes.every((p) => !alive(p.pty.pid)), 5000, 'agents gone');
  });

  it('with no board host for the idle time, ends its agents cleanly and exits', async () => {
    const root = dataRoot();
    const { client } = await connect(root, { idleMs: 400 });
    const p = await shellPane(client, 'idle', 'trap "echo bye > $0.bye; exit 0" HUP TERM; while :; do sleep 0.1; done');
    const pid = client.hostPid;
    client.leave();
    await waitFor(() => !alive(pid) && !alive(p.pty.pid), 10_000, 'idle pty host to exit');
  });

  it('refuses a pty host of another Forkbench version, and leaves it running', async () => {
    const root = dataRoot();
    const err = await connectPtyHost(root, { ptyHostVersion: '0.0.0-other' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PtyHostVersionError);
    const theirs = (err as PtyHostVersionError).theirs;
    endAfterTest(theirs.pid);
    expect((err as Error).message).toContain(`a pty host of Forkbench 0.0.0-other (protocol ${PTY_HOST_PROTOCOL}, pid ${theirs.pid})`);
    expect((err as Error).message).toContain(`this is Forkbench ${forkbenchVersion()}`);
    expect(alive(theirs.pid)).toBe(true);
    // A second try is refused the same way: it is not replaced behind the user's back.
    await expect(connectPtyHost(root)).rejects.toThrow(/0\.0\.0-other/);
  });

  it('replaceOther stops a pty host of another version, its agents ending cleanly, and starts ours in its place', async () => {
    const root = dataRoot();
    const refused = (await connectPtyHost(root, { ptyHostVersion: '0.0.0-other' }).catch((e: unknown) => e)) as PtyHostVersionError;
    expect(refused).toBeInstanceOf(PtyHostVersionError);
    expect(refused.message).toContain('forkbench serve --replace-pty-host');
    const oldPid = refused.theirs.pid;
    endAfterTest(oldPid);
    // An agent of the old version's, as its own board host made it (speaking its version), which says how
    // it ended: a clean end is a hang-up or a term it can answer, not a kill.
    const theirs = await PtyHostClient.connect(ptyHostPaths(root).socket, '0.0.0-other');
    const marker = join(root, 'ended-by');
    const agent = await shellPane(theirs, 'old', `trap 'echo HUP > ${marker}; exit 0' HUP; trap 'echo TERM > ${marker}; exit 0' TERM; echo READY; while :; do sleep 0.1; done`);
    await waitFor(() => agent.out().includes('READY'), 5000, 'the old agent to start');
    theirs.leave();

    const warnings: string[] = [];
    const got = await connect(root, { replaceOther: true, warn: (m) => warnings.push(m) });
    expect(got.started).toBe(true);
    expect(got.client.hostPid).not.toBe(oldPid);
    expect(alive(oldPid)).toBe(false);
    expect(alive(agent.pty.pid)).toBe(false);
    expect(fs.readFileSync(marker, 'utf8').trim()).toBe('HUP');
    expect(warnings).toEqual([`forkbench: stopped the pty host of Forkbench 0.0.0-other (pid ${oldPid}) and its agents; starting this version's`]);
    expect(fs.readFileSync(ptyHostPaths(root).log, 'utf8')).toContain(`ptyhost[${oldPid}]: stopping: SIGTERM`);
    // Ours works: a pane runs in it.
    const mine = await shellPane(got.client, 'new', 'echo NEW-HOST; exec sleep 100');
    await waitFor(() => mine.out().includes('NEW-HOST'), 5000, 'a pane in the new pty host');
  });

  it('refuses a socket folder or socket with wrong modes or another owner, touching nothing', async () => {
    const root = dataRoot();
    const paths = ptyHostPaths(root);
    fs.mkdirSync(paths.dir, { mode: 0o700 });
    fs.chmodSync(paths.dir, 0o755);
    await expect(connectPtyHost(root)).rejects.toThrow(`${paths.dir} has mode 0755, not 0700`);
    fs.chmodSync(paths.dir, 0o700);
    // A listening socket, but open to everyone.
    const srv = net.createServer((s) => s.on('data', () => s.write(controlFrame({ t: 'res', id: 1, ok: true, v: { version: forkbenchVersion(), protocol: PTY_HOST_PROTOCOL, pid: 1, adopted: true } }))));
    await new Promise<void>((r) => srv.listen(paths.socket, () => r()));
    try {
      fs.chmodSync(paths.socket, 0o666);
      await expect(connectPtyHost(root)).rejects.toThrow(`the pty host socket ${paths.socket} has mode 0666, not 0600`);
      fs.chmodSync(paths.socket, 0o600);
      if (process.getuid?.() === 0) {
        fs.chownSync(paths.socket, 65534, 65534);
        await expect(connectPtyHost(root)).rejects.toThrow(`belongs to uid 65534, not to you (0)`);
        fs.chownSync(paths.socket, 0, 0);
        fs.chownSync(paths.dir, 65534, 65534);
        await expect(connectPtyHost(root)).rejects.toThrow(`${paths.dir} belongs to uid 65534`);
        fs.chownSync(paths.dir, 0, 0);
      }
      expect(fs.existsSync(paths.socket)).toBe(true);
      // Put right, the same socket is accepted (this fake answers hello like a pty host of ours).
      const ok = await connectPtyHost(root);
      expect(ok.started).toBe(false);
      ok.client.leave();
    } finally {
      srv.close();
    }
  });
});
