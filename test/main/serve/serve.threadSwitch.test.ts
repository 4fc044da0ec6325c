import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt } from '../../../e2e/harness.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf, serveOn, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * A serve window shows one Thread at a time. Once it switches to another, the Thread it left sends it no
 * pane output, and its panes are no longer held for this window's acks: a window that switched away must
 * not pause (or be flooded by) agents it no longer shows.
 */

let root: string;
const serves: ServeProc[] = [];
beforeAll(() => {
  ensureRendererBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'fb-thread-switch-'));
});
afterAll(() => {
  for (const s of serves) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  const pid = ptyHostPidOf(join(root, 'data'));
  if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
  fs.rmSync(root, { recursive: true, force: true });
});

describe('a serve window that switches Threads', () => {
  it('hears no more pane output of the Thread it left, and no agent there waits on its acks', async () => {
    const one = join(root, 'one');
    const two = join(root, 'two');
    for (const d of [one, two]) fs.mkdirSync(d);
    const keyOne = threadKeyOf(one);
    // A window that never acks: any pane it is still attached to stops at the high watermark.
    const s = await serveOn({ root, project: one, key: keyOne, ack: false });
    serves.push(s);
    const keyTwo = ((await s.window.call('threads.open', { folder: two })) as { key: string }).key;
    const a: AgentInfo = await s.window.call('agent.launch', { key: keyOne, profile: 'shell', cols: 100, rows: 30 });
    await s.window.call('agent.screen', { key: keyOne, agentId: a.id });
    const paneOf = (key: string) => s.window.pushes.filter((p) => p.type === 'pane-data' && p.key === key);
    await waitFor(() => paneOf(keyOne).length > 0, 20_000, "the first Thread's pane output");

    await s.window.call('thread.snapshot', { key: keyTwo });
    const seen = paneOf(keyOne).length;
    // In the Thread's folder: a contained pane has a private /tmp, and writes the folder of a Thread without git.
    const done = join(one, 'flood-done');
    // 20 MB through the pane it left: far past the high watermark a window holds a pane at.
    await s.window.call('agent.input', { key: keyOne, agentId: a.id, data: `yes flood-after-the-switch | head -c 20000000; touch '${done}'\r` });
    await waitFor(() => fs.existsSync(done), 60_000, 'the flood in the Thread the window left to finish');
    const b: AgentInfo = await s.window.call('agent.launch', { key: keyTwo, profile: 'shell', cols: 100, rows: 30 });
    await s.window.call('agent.screen', { key: keyTwo, agentId: b.id });
    await s.window.call('agent.input', { key: keyTwo, agentId: b.id, data: 'echo "PROBE"-TWO\r' });
    await waitFor(() => paneOf(keyTwo).some((p) => p.type === 'pane-data' && p.data.includes('PROBE-TWO')), 20_000, "the shown Thread's output");
    const after = paneOf(keyOne).slice(seen).map((p) => (p.type === 'pane-data' ? p.data : '')).join('');
    expect(after).not.toContain('flood-after-the-switch');
  }, 120_000);
});
