import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { isSafeExternal, isTrustedSender, registerWindowIpc } from '../../../src-main/electron/ipcBridge.js';

import { ensureBuilt } from '../../helpers/cli.js';

const require = createRequire(import.meta.url);
ensureBuilt();
// The compiled preload, exactly as Electron loads it (CommonJS, sandboxed).
const preload = require('../../../dist-main/src-main/electron/preload.cjs') as typeof import('../../../src-main/electron/preload.cjs');

function fakeIpcRenderer() {
  const listeners = new Map<string, Set<(e: unknown, ...a: unknown[]) => void>>();
  return {
    invoke: vi.fn(async (_c: string, method: string) => (method === 'bad' ? { ok: false, error: { code: 'invalid-input', message: 'nope' } } : { ok: true, value: 42 })),
    on: (c: string, l: (e: unknown, ...a: unknown[]) => void) => listeners.set(c, (listeners.get(c) ?? new Set()).add(l)),
    removeListener: (c: string, l: (e: unknown, ...a: unknown[]) => void) => listeners.get(c)?.delete(l),
    emit: (c: string, ...a: unknown[]) => listeners.get(c)?.forEach((l) => l({ sender: 'SECRET-HANDLE' }, ...a)),
    count: (c: string) => listeners.get(c)?.size ?? 0,
  };
}

describe('preload', () => {
  it('exposes exactly the window API under one name, and nothing of ipcRenderer', () => {
    const exposed: Record<string, unknown> = {};
    preload.expose({ exposeInMainWorld: (k, v) => (exposed[k] = v) }, fakeIpcRenderer());
    expect(Object.keys(exposed)).toEqual(['forkbench']);
    const api = exposed.forkbench as Record<string, unknown>;
    expect(Object.keys(api).sort()).toEqual(['call', 'subscribe']);
    expect(Object.isFrozen(api)).toBe(true);
    for (const v of Object.values(api)) expect(typeof v).toBe('function');
  });

  it('call forwards on one channel and turns a refusal into an error; pushes arrive without the IPC event', async () => {
    const ipc = fakeIpcRenderer();
    const api = preload.createBridge(ipc);
    await expect(api.call('threads.list', {})).resolves.toBe(42);
    expect(ipc.invoke).toHaveBeenCalledWith('forkbench:call', 'threads.list', {});
    await expect(api.call('bad', {})).rejects.toMatchObject({ code: 'invalid-input', message: 'nope' });
    const got: unknown[][] = [];
    const off = api.subscribe((...args: unknown[]) => got.push(args));
    ipc.emit('forkbench:push', { type: 'notify' });
    expect(got).toEqual([[{ type: 'notify' }]]);
    off();
    expect(ipc.count('forkbench:push')).toBe(0);
  });
});

describe('IPC handlers', () => {
  const page = 'file:///opt/forkbench/dist-renderer/index.html';
  const ourWc = { id: 1 };
  const ours = (wc: unknown) => wc === ourWc;
  const event = (sender: unknown, url: string, parent: unknown = null) => ({ sender, senderFrame: { url, parent } }) as never;

  it('accept our page in our window and refuse a foreign sender, another page, or an iframe', () => {
    expect(isTrustedSender(event(ourWc, `${page}?thread=0123456789abcdef`), ours as never, page)).toBe(true);
    expect(isTrustedSender(event({ id: 2 }, page), ours as never, page)).toBe(false);
    expect(isTrustedSender(event(ourWc, 'https://evil.example/index.html'), ours as never, page)).toBe(false);
    expect(isTrustedSender(event(ourWc, 'file:///tmp/other.html'), ours as never, page)).toBe(false);
    expect(isTrustedSender(event(ourWc, page, { url: page }), ours as never, page)).toBe(false);
    expect(isTrustedSender({ sender: ourWc, senderFrame: null } as never, ours as never, page)).toBe(false);
  });

  it('a refused sender never reaches the router', async () => {
    let handler: ((e: unknown, m: unknown, p: unknown) => Promise<unknown>) | undefined;
    const router = { call: vi.fn(async () => ({ ok: true as const, value: 'ran' })) };
    registerWindowIpc({ handle: ((_c: string, h: typeof handler) => (handler = h)) as never }, router, (e) => (e as { sender: unknown }).sender === ourWc);
    await expect(handler?.({ sender: { id: 9 } }, 'threads.list', {})).resolves.toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(router.call).not.toHaveBeenCalled();
    await expect(handler?.({ sender: ourWc }, 'threads.list', {})).resolves.toEqual({ ok: true, value: 'ran' });
  });

  it('opens only http(s) links outside', () => {
    expect(isSafeExternal('https://github.com/x')).toBe(true);
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'vscode://x', 'https://user:pw@host/', 'not a url']) expect(isSafeExternal(bad)).toBe(false);
  });
});
