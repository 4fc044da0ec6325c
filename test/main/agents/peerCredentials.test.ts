/**
 * Issue 29, finding 6: every call is tied to the process that connected, so the host reads each
 * connection's SO_PEERCRED. One long-lived perl helper is handed each descriptor over Node's IPC channel;
 * real processes connect here, and each connection is told its own pid, concurrently, and goes on working.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../../../src-main/base/pathLookup.js';
import { PeerCredHelper } from '../../../src-main/pty/peerCredHelper.js';
import { peerPid } from '../../../src-main/agents/peerCredentials.js';

const perl = findOnPath('perl');
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** A server on a fresh socket, and `n` perl processes that each connect, send their pid, echo one line back
 *  and wait to be ended. */
async function peers(n: number) {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-peercred-'));
  const path = join(dir, 's.sock');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(path, r));
  const conns: Array<{ c: net.Socket; said: Promise<number> }> = [];
  const all = new Promise<void>((resolve) =>
    server.on('connection', (c) => {
      const said = new Promise<number>((r) => c.once('data', (d) => r(Number(String(d).trim()))));
      conns.push({ c, said });
      if (conns.length === n) resolve();
    }),
  );
  const kids = Array.from({ length: n }, () =>
    spawn('perl', ['-MIO::Socket::UNIX', '-e', `my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die; $s->autoflush(1); print $s "$$\\n"; my $l = <$s>; print $s "echo $l"; sleep 60;`, path], { stdio: 'ignore' }),
  );
  cleanups.push(() => {
    for (const k of kids) k.kill('SIGKILL');
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await all;
  return conns;
}

describe('reading a connection’s peer', () => {
  it('the long-lived helper names each connecting process, 20 at once, and each connection reads on', async () => {
    const helper = PeerCredHelper.start(perl);
    expect(helper, 'x64 and arm64 Linux run the helper').not.toBeNull();
    cleanups.push(() => helper?.dispose());
    const conns = await peers(20);
    const pids = await Promise.all(conns.map(({ c }) => helper!.peerPid(c)));
    expect(pids).toEqual(await Promise.all(conns.map(({ said }) => said)));
    // The connection is still the host's to read and write: a line goes out and its echo comes back.
    const echoed = await Promise.all(
      conns.map(({ c }) => new Promise<string>((r) => {
        c.once('data', (d) => r(String(d)));
        c.write('ping\n');
      })),
    );
    expect(echoed.every((e) => e === 'echo ping\n')).toBe(true);
  });

  it('peerPid (the process’s shared helper) names the connecting process, and the connection reads on', async () => {
    const [one] = await peers(1);
    expect(await peerPid(one!.c, perl)).toBe(await one!.said);
    const echoed = new Promise<string>((r) => one!.c.once('data', (d) => r(String(d))));
    one!.c.write('ping\n');
    expect(await echoed).toBe('echo ping\n');
  });
});
