/**
 * Issue 29, finding 2: the person check failed open. A process in a pane that connected, forked and let the
 * connecting process exit was told `{"person":true}` (its pid could not be read, so "no pane"); so was one
 * that left its pane with `setsid -f`. With that, an agent had its commit recorded as the person's.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { cliScript } from '../../../src-main/base/nodeRuntime.js';
import { PERSON_CHECK_METHOD } from '../../../src-shared/protocol/hookMethods.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { openTestHost } from '../../helpers/testHost.js';

/** Connects to the agents' socket; with `fork`, the connecting process exits and its child asks. Writes
 *  the answer line to `out`. */
const ASKER = `
use IO::Socket::UNIX;
my ($sock, $out, $fork) = @ARGV;
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $sock) or die "connect: $!";
if ($fork) { my $p = fork; die "fork: $!" unless defined $p; exit 0 if $p; select(undef, undef, undef, 0.3); }
print $s qq({"jsonrpc":"2.0","id":1,"method":"${PERSON_CHECK_METHOD}","params":{}}\\n);
my $a = <$s>;
open(my $f, '>', "$out.tmp") or die; print $f $a; close $f; rename("$out.tmp", $out) or die;
`;

// Its tests claim with an agent's secret from the test process (the CLI) before the person checks they are about.

const fixture = hostFixture('person', { peerJudge: secretsFromTheTestProcess });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fixture.cleanup();
});

const answerIn = async (out: string) => JSON.parse(await waitFor(() => fs.existsSync(out) && fs.readFileSync(out, 'utf8'), 10_000, 'the person check’s answer')).result;

function ask(socket: string, out: string, fork: boolean): Promise<void> {
  return new Promise((resolve, reject) => execFile('perl', ['-e', ASKER, socket, out, fork ? '1' : ''], (err) => (err ? reject(err) : resolve())));
}

describe('the person check fails closed', () => {
  it('a process outside every pane is a person (the control)', async () => {
    const host = await fixture.open();
    const out = join(host.folder, 'answer');
    await ask(host.socket.path, out, false);
    expect(await answerIn(out)).toEqual({ person: true });
  });

  it('a caller that connects, forks and exits is not a person: what cannot be read is no one', async () => {
    const host = await fixture.open();
    const out = join(host.folder, 'answer');
    await ask(host.socket.path, out, true);
    expect(await answerIn(out)).toMatchObject({ person: false, pane: '(a caller that is gone)' });
  });

  /** A pane in a pty host that detaches the asker with `setsid -f`: the person check's answer to it. */
  async function detachedAsker(uncontained?: string[]): Promise<unknown> {
    const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-person-pty-'));
    fs.mkdirSync(join(root, 'project'));
    const link = await PtyHostLink.open(join(root, 'data'), { idleMs: 60_000 });
    const { host } = await openTestHost({ closedBy: 'caller', folder: join(root, 'project'), dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, ptyHost: link, uncontained });
    cleanups.push(async () => {
      await host.dispose();
      await link.shutdown();
      fs.rmSync(root, { recursive: true, force: true });
    });
    // In the Thread folder: a contained pane reads the script and writes its answer there (a Thread without
    // git); beside it, in the test's tmp root, the pane's private /tmp would hide both.
    const out = join(root, 'project', 'answer');
    const script = join(root, 'project', 'asker.pl');
    fs.writeFileSync(script, ASKER);
    await host.roster.launch('custom', { command: `setsid -f perl ${script} "$FORKBENCH_SOCKET" ${out} ''; exec sleep 60` });
    return answerIn(out);
  }

  // Uncontained: only there does `setsid -f` take a process out of its pane's tree (in a sandbox, bwrap's
  // init stays its ancestor), so only there is the pty host's reaper what ties it to its agent.
  it('a process a pane detached with `setsid -f` is not a person: the pty host’s reaper adopted it', async () => {
    expect(await detachedAsker(['all'])).toMatchObject({ person: false, pane: '(a process an agent started, outside its pane)' });
  });

  it('contained, a process a pane detached with `setsid -f` is not a person: it is still in its pane’s tree', async () => {
    expect(await detachedAsker()).toMatchObject({ person: false, pane: 'custom 1' });
  });

  it('a verify command runs as its agent’s: a person check from the task’s verify script is not a person (issue 29, finding 7)', async () => {
    const host = await fixture.open();
    const out = join(host.folder, 'answer');
    const script = join(host.folder, 'asker.pl');
    fs.writeFileSync(script, ASKER);
    // The task's code asks the host whether it is the person, as a `forkbench record` by hand would.
    await host.board.run((e) => e.setSettings({ verify: `perl ${script} ${host.socket.path} ${out} ''; exit 1` }));
    await host.board.run((e) => e.addTask({ title: 'verified by the agent’s code' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const cli = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [cliScript(), ...args, '--json'], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: host.roster.agent(agent.id)?.secret } }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
    const token = JSON.parse(await cli(['claim', 'T-1'])).result.token as number;
    await cli(['done', 'T-1', '--token', String(token)]);
    expect(await answerIn(out)).toEqual({ person: false, pane: `${agent.name} (its verify command)` });
  });

  // Issue 42, item 3: the verify's children were not under the panes' subreaper, so one detached with
  // `setsid -f` had no tracked process in its ancestry and was taken for the person.
  it('a process a verify command detached with `setsid -f` is not a person: the verify’s own reaper holds it', async () => {
    const host = await fixture.open();
    const out = join(host.folder, 'answer');
    const script = join(host.folder, 'asker.pl');
    fs.writeFileSync(script, ASKER);
    // The verify waits for the answer: it ends its whole tree when it exits.
    await host.board.run((e) => e.setSettings({ verify: `setsid -f perl ${script} ${host.socket.path} ${out} ''; while [ ! -f ${out} ]; do sleep 0.05; done; exit 1` }));
    await host.board.run((e) => e.addTask({ title: 'verified by the agent’s code' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const cli = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [cliScript(), ...args, '--json'], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: host.roster.agent(agent.id)?.secret } }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
    const token = JSON.parse(await cli(['claim', 'T-1'])).result.token as number;
    await cli(['done', 'T-1', '--token', String(token)]);
    expect(await answerIn(out)).toEqual({ person: false, pane: `${agent.name} (its verify command)` });
  });
});
