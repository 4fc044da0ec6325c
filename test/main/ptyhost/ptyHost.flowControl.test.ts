/**
 * Flow control end to end through the pty host process: a pane held there floods (`yes`), its board host
 * attaches a window consumer that never acks, and the pty in the other process stops reading, so the child
 * blocks in write(2): asleep, no CPU, nothing more on the wire. Acking, detaching, or the board host going
 * away releases it. The in-process counterpart is ptySession.test.ts ("a window that never acks ...").
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';
import { readProcFacts } from '../../../src-main/pty/procReader.js';
import type { PtyHostClient } from '../../../src-main/ptyhost/ptyHostClient.js';
import type { RemotePty } from '../../../src-main/ptyhost/remotePty.js';
import { sleep, waitFor } from '../../helpers/pty.js';
import { ptyHostsOfThisFile } from '../../helpers/ptyHosts.js';

const linux = process.platform === 'linux';
/** node's tty ReadStream reads at most 64 KiB at once: the most that can arrive after a pause was decided. */
const READ_CHUNK = 64 * 1024;
const HIGH = FlowLimits.highWatermarkChars;
const FROZEN = 'frozen-window';

const hosts = ptyHostsOfThisFile('fb-ptyhost-flow-');

async function floodInPtyHost(): Promise<{ client: PtyHostClient; pty: RemotePty; chars: () => number }> {
  const { client } = await hosts.connect(hosts.dataRoot(), { idleMs: 60_000 });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };
  const who = { threadKey: 'k1', agentId: 'flood', secretDigest: 'f'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'custom', name: 'flood' };
  const pty = (await client.spawn('yes', ['flood'], { cwd: tmpdir(), env, cols: 80, rows: 24 }, who)) as RemotePty;
  let chars = 0;
  pty.onData((d) => (chars += d.length));
  return { client, pty, chars: () => chars };
}

const stats = (client: PtyHostClient, pty: RemotePty) => client.request('stats', { pane: pty.pane });

/** Polls the pty host until the pane's pty is paused. */
const pausedIn = (client: PtyHostClient, pty: RemotePty) => waitFor(async () => (await stats(client, pty)).paused, 10_000, 'the pane to pause');

/** Over half a second the child neither runs nor gets a read chunk more through: it is blocked in write(2). */
async function expectBlocked(client: PtyHostClient, pty: RemotePty, chars: () => number): Promise<void> {
  await sleep(100); // let the kernel's pty buffer fill and `yes` block
  const cpu0 = (await readProcFacts(pty.pid)).cpuMs;
  const chars0 = chars();
  await sleep(500);
  const facts = await readProcFacts(pty.pid);
  const s = await stats(client, pty);
  expect(s.paused).toBe(true);
  expect(facts.state).toBe('sleeping');
  expect(facts.cpuMs - cpu0).toBeLessThanOrEqual(20); // one 10 ms tick of slack
  expect(chars() - chars0).toBeLessThanOrEqual(READ_CHUNK);
  expect(s.maxUnackedChars).toBeLessThanOrEqual(HIGH + READ_CHUNK);
}

describe.runIf(linux)('flow control through the pty host', () => {
  it('a window that never acks keeps the pane paused in the pty host and the child blocked; acking and detaching release it', async () => {
    const { client, pty, chars } = await floodInPtyHost();
    pty.attach(FROZEN);
    await pausedIn(client, pty);
    await expectBlocked(client, pty, chars);

    // Acks that catch up let it run again, and without more acks it pauses again.
    const before = chars();
    pty.ack(before, FROZEN);
    await waitFor(() => chars() > before + HIGH, 10_000, 'output to flow after the ack');
    await pausedIn(client, pty);
    await expectBlocked(client, pty, chars);

    // Detaching the window leaves only the pty host's own mirror, which keeps up: the flood runs on.
    const detachedAt = chars();
    pty.detach(FROZEN);
    await waitFor(() => chars() > detachedAt + 2 * HIGH, 10_000, 'output to flow after the detach');
    expect((await stats(client, pty)).paused).toBe(false);
  });

  it('a board host that goes away takes its windows with it: a pane it held paused runs again', async () => {
    const { client, pty, chars } = await floodInPtyHost();
    pty.attach(FROZEN);
    await pausedIn(client, pty);
    await expectBlocked(client, pty, chars);
    // The board host is killed (its connection just closes): the pty host drops its consumers.
    client.leave();
    const cpu0 = (await readProcFacts(pty.pid)).cpuMs;
    // `yes` at full speed uses a core; 200 ms of CPU is far past what a blocked one could gather.
    const deadline = performance.now() + 10_000;
    for (;;) {
      const facts = await readProcFacts(pty.pid);
      if (facts.cpuMs - cpu0 > 200) break;
      if (performance.now() > deadline) throw new Error(`the child stayed blocked after its board host left (state ${facts.state}, +${facts.cpuMs - cpu0} ms CPU)`);
      await sleep(20);
    }
  });
});
