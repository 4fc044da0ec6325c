import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { dataLockPath } from '../../../src-main/base/hostLock.js';
import { proofFor } from '../../../src-main/ptyhost/adoptionKey.js';
import { ADOPTION_KEY_FD, ptyHostCommand } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { forkbenchVersion, ptyHostPaths, PTY_HOST_PROTOCOL } from '../../../src-main/ptyhost/protocol.js';
import { checkoutRuntime } from '../../../src-main/base/nodeRuntime.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Finding 1 of issue 29: a pane that kills its board host and greets the pty host in its place. Every
 * attacker here is a real process started by a real agent's shell; what it gets is read from a file it
 * writes, since the window it would print to died with serve.
 */

const { at, start } = servedProjectOfThisFile('fb-takeover-');
/** The pty host's own refusal, for agents that run uncontained (sandbox off, or no bwrap): a contained pane
 *  sees neither serve's pid nor the data folder's lock and socket (test/main/sandbox/containedPanes.test.ts). */
const UNCONTAINED = ['--uncontained', 'all'];

/**
 * The attacker, in Node: kill -9 the board host named in the data folder's lock, greet the pty host with
 * this version's hello, answer a challenge with a made-up proof, and ask for `list` (every agent's identity)
 * and `kill` of pane 1. Writes every answer it got to RESULT.
 */
const GREETER = String.raw`
const net = require('node:net');
const fs = require('node:fs');
const [socket, result, lock, version, protocol] = process.argv.slice(2);
const frame = (m) => { const j = Buffer.from(JSON.stringify(m)); const b = Buffer.alloc(5); b.writeUInt32BE(j.length + 1, 0); b[4] = 1; return Buffer.concat([b, j]); };
if (lock) { try { process.kill(JSON.parse(fs.readFileSync(lock, 'utf8')).pid, 'SIGKILL'); } catch (e) { } }
const answers = [];
// Written aside and renamed: the test reads the file the moment it exists.
const done = (why) => { fs.writeFileSync(result + '.tmp', JSON.stringify({ why, answers })); fs.renameSync(result + '.tmp', result); process.exit(0); };
setTimeout(() => done('timeout'), 8000);
const tryConnect = (n) => {
  const c = net.createConnection(socket);
  let buf = Buffer.alloc(0);
  c.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 5 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const len = buf.readUInt32BE(0); const m = JSON.parse(buf.subarray(5, 4 + len).toString()); buf = buf.subarray(4 + len);
      answers.push(m);
      if (m.id === 1 && m.ok && m.v && m.v.challenge) c.write(frame({ t: 'req', id: 2, m: 'prove', p: { proof: '0'.repeat(64) } }));
    }
  });
  c.on('error', () => (n > 0 ? setTimeout(() => tryConnect(n - 1), 50) : done('no connection')));
  c.on('close', () => done('closed'));
  c.on('connect', () => c.write(Buffer.concat([
    frame({ t: 'req', id: 1, m: 'hello', p: { version, protocol: Number(protocol) } }),
    frame({ t: 'req', id: 3, m: 'list', p: {} }),
    frame({ t: 'req', id: 4, m: 'kill', p: { pane: 1 } }),
  ])));
};
// The board host's death may take a moment to free the pty host (its connection closes): greet after it.
setTimeout(() => tryConnect(20), lock ? 300 : 0);
`;

/** The same greeting from a process whose connector is gone: it connects, forks, and the parent exits, so
 *  the kernel's answer names a dead process. Perl, as git's hooks are. */
const DEAD_CONNECTOR = String.raw`
use Socket; use IO::Socket::UNIX; use Digest::SHA qw(hmac_sha256_hex);
my ($socket, $result, $version, $protocol, $keyHex) = @ARGV;
my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $socket) or die "connect: $!";
my $pid = fork; exit 0 if $pid;
select(undef, undef, undef, 0.3);
sub frame { my $j = shift; return pack('N C', length($j) + 1, 1) . $j }
print $c frame(qq({"t":"req","id":1,"m":"hello","p":{"version":"$version","protocol":$protocol}}));
my ($all, $buf) = ('', '');
while (sysread($c, $buf, 65536)) {
  $all .= $buf;
  if ($all =~ /"challenge":"([0-9a-f]+)"/ && !$sent) {
    my $proof = $keyHex ? hmac_sha256_hex("forkbench pty host adoption\0" . $1, pack('H*', $keyHex)) : '0' x 64;
    print $c frame(qq({"t":"req","id":2,"m":"prove","p":{"proof":"$proof"}}));
    $sent = 1;
  }
  last if $all =~ /"id":2/ || $all =~ /"ok":false/;
}
open my $out, '>', "$result.tmp"; print $out $all; close $out; rename("$result.tmp", $result);
`;

const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
const type = (s: ServeProc, agentId: string, line: string) => s.window.call('agent.input', { key: at.key, agentId, data: `${line}\r` });

async function readResult(path: string): Promise<{ why: string; answers: Array<{ id?: number; ok?: boolean; code?: string; error?: string; v?: unknown }> }> {
  await waitFor(() => fs.existsSync(path), 20_000, `the attacker's result in ${path}`);
  return JSON.parse(fs.readFileSync(path, 'utf8'));
}

describe('an agent cannot take over the pty host', () => {
  it('a pane that kills serve -9 and greets the pty host (directly, and after setsid -f) is refused: no list, no kill; the agents and the next serve carry on', async () => {
    const { root, key } = at;
    const dataDir = join(root, 'data');
    const greeter = join(root, 'greet.cjs');
    fs.writeFileSync(greeter, GREETER);
    const paths = ptyHostPaths(dataDir);
    const first = await start({ args: UNCONTAINED });
    const a: AgentInfo = await first.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    const b: AgentInfo = await first.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    await type(first, a.id, 'echo "READY"-A');
    await waitFor(() => paneText(first, a.id).includes('READY-A'), 20_000, 'A ready');
    const args = (result: string, lock: string) => [process.execPath, greeter, paths.socket, result, lock, forkbenchVersion(), String(PTY_HOST_PROTOCOL)].map((x) => `'${x}'`).join(' ');

    // 1. From A's shell: kill serve, then greet as the board host.
    const direct = join(root, 'direct.json');
    await type(first, a.id, args(direct, dataLockPath(dataDir)));
    const r1 = await readResult(direct);
    expect(await first.exit, 'the attacker did kill serve').toBe(null);
    const hello1 = r1.answers.find((m) => m.id === 1);
    expect(hello1, JSON.stringify(r1)).toMatchObject({ ok: false, code: 'refused' });
    expect(hello1?.error).toMatch(/serves only its board host/);
    // Nothing after the hello was served: no agent's identity listed, no pane ended.
    expect(r1.answers.some((m) => m.id === 3 || m.id === 4), JSON.stringify(r1)).toBe(false);
    expect(b.pid && alive(b.pid)).toBe(true);
    expect(fs.readFileSync(paths.log, 'utf8')).toMatch(/refused a greeting from an agent's process pid \d+ \(.*greet\.cjs/);

    // 2. The next serve (started from outside any pane) takes both agents back.
    const second = await start({ args: UNCONTAINED });
    await waitFor(async () => (await second.window.call('thread.snapshot', { key })).agents.filter((x: AgentInfo) => x.status !== 'exited').length === 2, 20_000, 'both agents adopted');
    expect(fs.readFileSync(paths.log, 'utf8')).toMatch(/adopted the board host pid \d+ \(.*forkbench.* serve/);

    // 3. The same, from a process the agent detached from its pane (setsid -f: a new session, reparented).
    const detached = join(root, 'detached.json');
    await type(second, a.id, `setsid -f ${args(detached, dataLockPath(dataDir))}`);
    const r2 = await readResult(detached);
    expect(r2.answers.find((m) => m.id === 1), JSON.stringify(r2)).toMatchObject({ ok: false, code: 'refused' });
    expect(r2.answers.some((m) => m.id === 3 || m.id === 4)).toBe(false);
    expect(alive(a.pid!) && alive(b.pid!)).toBe(true);

    // 4. A connector that forked and died, from a pane: the kernel names a dead process; it gets a challenge,
    //    and no proof it can make is the key's.
    const third = await start({ args: UNCONTAINED });
    const deadScript = join(root, 'dead.pl');
    fs.writeFileSync(deadScript, DEAD_CONNECTOR);
    const dead = join(root, 'dead.out');
    await type(third, a.id, `perl '${deadScript}' '${paths.socket}' '${dead}' '${forkbenchVersion()}' ${PTY_HOST_PROTOCOL}`);
    await waitFor(() => fs.existsSync(dead), 20_000, 'the dead connector to finish');
    const out = fs.readFileSync(dead, 'utf8');
    expect(out).toMatch(/"code":"(refused|busy)"/);
    expect(out).not.toMatch(/"id":2,"ok":true/);
    // The board host in charge was never disturbed.
    await type(third, b.id, 'echo "STILL"-B');
    await waitFor(() => paneText(third, b.id).includes('STILL-B'), 20_000, 'B still answers through serve');
  }, 180_000);

  it('a pty host that cannot tell who greets (a connector that forked and died) adopts only a proof of the key it was started with', async () => {
    const data = fs.mkdtempSync(join(tmpdir(), 'fb-adoptkey-'));
    const { dir, socket, log } = ptyHostPaths(data);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const run = ptyHostCommand(checkoutRuntime(), socket, 60_000);
    const logFd = fs.openSync(log, 'a', 0o600);
    const child = spawn(run.command, run.args, { env: run.env, stdio: ['ignore', logFd, logFd, 'pipe'] });
    fs.closeSync(logFd);
    const key = Buffer.alloc(32, 7);
    (child.stdio[ADOPTION_KEY_FD] as NodeJS.WritableStream).end(key);
    try {
      await waitFor(() => fs.existsSync(socket), 20_000, 'the pty host to listen');
      const deadScript = join(data, 'dead.pl');
      fs.writeFileSync(deadScript, DEAD_CONNECTOR);
      const greet = async (name: string, proofKey?: Buffer) => {
        const out = join(data, name);
        spawn('perl', [deadScript, socket, out, forkbenchVersion(), String(PTY_HOST_PROTOCOL), ...(proofKey ? [proofKey.toString('hex')] : [])], { stdio: 'ignore' });
        await waitFor(() => fs.existsSync(out), 20_000, name);
        const said = fs.readFileSync(out, 'utf8');
        // Nothing heard at all: the pty host's log says why.
        if (!said) throw new Error(`the ${name} greeting heard nothing; the pty host's log: ${fs.readFileSync(log, 'utf8')}`);
        return said;
      };
      const wrong = await greet('wrong', Buffer.alloc(32, 8));
      expect(wrong).toMatch(/"adopted":false/);
      expect(wrong).toMatch(/"id":2,"ok":false.*did not prove the key/);
      // The proof a key-holder makes (the board host's own code computes the same: proofFor).
      expect(proofFor(key, 'ab')).toMatch(/^[0-9a-f]{64}$/);
      const right = await greet('right', key);
      expect(right).toMatch(/"id":2,"ok":true/);
      expect(fs.readFileSync(log, 'utf8')).toMatch(/adopted the board host .* by the adoption key/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});
