/**
 * Issue 30, finding 4: Electron's main routed every push to "the window of its Thread", the one it opened for
 * it, while the page can switch Threads inside its window (threads.open, then a snapshot of the other). A
 * window that switched heard nothing of the Thread it showed and kept getting the output of the one it left.
 * Now the host process's windows (src-main/process/hostWindows.ts) follow what each window shows, as serve's
 * do. main.ts runs against a fake `electron` module (the binary cannot be downloaded here); everything behind
 * it is real: the host process, the board, the pty host and the agents' ptys.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { AgentInfo, WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { PROJECT_ROOT } from '../../../src-main/thread/cliShim.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { fake } from '../../helpers/fakeElectron.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf } from '../../helpers/serveProcess.js';

vi.mock('electron', async () => (await import('../../helpers/fakeElectron.js')).fake.electron);
vi.mock('electron-store', async () => (await import('../../helpers/fakeElectron.js')).fakeStore);

const PAGE_URL = pathToFileURL(join(PROJECT_ROOT, 'dist-renderer', 'index.html')).href;
const root = fs.mkdtempSync(join(tmpdir(), 'fb-electron-switch-'));
const one = join(root, 'one');
const two = join(root, 'two');
for (const d of [one, two]) fs.mkdirSync(d);
const keyOne = threadKeyOf(one);
// The app opens the folder named on its command line; its agents' sockets go under the runtime folder.
process.argv.push(one);
process.env.XDG_RUNTIME_DIR = join(root, 'run');
fs.mkdirSync(process.env.XDG_RUNTIME_DIR, { mode: 0o700 });
const data = join(root, 'data');
fake.dataDir.path = data;
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  const host = ptyHostPidOf(data);
  if (host && alive(host)) process.kill(host, 'SIGTERM');
  fs.rmSync(root, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('an Electron window that switches Threads', () => {
  it('gets the pane output of the Thread it shows now, and none of the one it left', async () => {
    await import('../../../src-main/electron/main.js');
    await vi.waitFor(() => expect(fake.windows.length).toBe(1), { timeout: 30_000 });
    const win = fake.windows[0]!;
    const handler = fake.electron.ipcMain.handle.mock.calls[0]![1] as (e: unknown, m: string, p: unknown) => Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>;
    /** A call from the window's page, as its preload makes it. */
    const call = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
      const r = await handler({ sender: win.webContents, senderFrame: { parent: null, url: `${PAGE_URL}?thread=${keyOne}` } }, method, params);
      if (!r.ok) throw new Error(`${method}: ${r.error?.message}`);
      return r.value as T;
    };
    const paneText = (key: string) =>
      fake.sent
        .map((s) => s.push as WindowPush)
        .filter((p): p is Extract<WindowPush, { type: 'pane-data' }> => p.type === 'pane-data' && p.key === key)
        .map((p) => p.data)
        .join('');
    const shell = async (key: string) => {
      const a = await call<AgentInfo>('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
      pids.push(a.pid!);
      await call('agent.screen', { key, agentId: a.id });
      return a;
    };

    await call('thread.snapshot', { key: keyOne });
    const a = await shell(keyOne);
    await call('agent.input', { key: keyOne, agentId: a.id, data: 'echo "ONE"-BEFORE\r' });
    await waitFor(() => paneText(keyOne).includes('ONE-BEFORE'), 20_000, "the first Thread's output in its window");

    // The page switches: it opens the other folder and reads its snapshot.
    const keyTwo = (await call<{ key: string }>('threads.open', { folder: two })).key;
    await call('thread.snapshot', { key: keyTwo });
    const b = await shell(keyTwo);
    await call('agent.input', { key: keyTwo, agentId: b.id, data: 'echo "TWO"-SHOWN\r' });
    await call('agent.input', { key: keyOne, agentId: a.id, data: 'echo "ONE"-AFTER\r' });
    await waitFor(() => paneText(keyTwo).includes('TWO-SHOWN'), 20_000, "the shown Thread's output in the window");
    // The line typed in the Thread it left is on that agent's screen, and was not sent to the window.
    await waitFor(async () => (await call<string>('agent.screen', { key: keyOne, agentId: a.id })).includes('ONE-AFTER'), 20_000, 'the line in the Thread left');
    expect(paneText(keyOne)).not.toContain('ONE-AFTER');

    // Quit and stop the agents, as the person answers.
    fake.answers.push('Stop agents');
    fake.electron.app.quit();
    await vi.waitFor(() => expect(fake.quit.done).toBe(true), { timeout: 30_000 });
    expect(alive(a.pid!) || alive(b.pid!)).toBe(false);
  }, 120_000);
});
