/**
 * The preload: the only bridge between a sandboxed window and the host. It exposes exactly the window API
 * (`call` and `subscribe`) and nothing else: no ipcRenderer, no Node. Sandboxed preloads may require only
 * 'electron', so this file stands alone (CommonJS, no imports of our own); the host validates every request.
 */

export const CALL_CHANNEL = 'forkbench:call';
export const PUSH_CHANNEL = 'forkbench:push';

interface IpcLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

type WindowReply = import('../../src-shared/protocol/windowApi.js').WindowReply;

export function createBridge(ipc: IpcLike) {
  return Object.freeze({
    call: async (method: string, params: unknown): Promise<unknown> => {
      const reply = (await ipc.invoke(CALL_CHANNEL, String(method), params)) as WindowReply;
      if (reply.ok) return reply.value;
      throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
    },
    subscribe: (listener: (push: unknown) => void): (() => void) => {
      // The IPC event object never reaches the page: it carries `sender`, a handle into the main process.
      const wrapped = (_event: unknown, push: unknown) => listener(push);
      ipc.on(PUSH_CHANNEL, wrapped);
      return () => {
        ipc.removeListener(PUSH_CHANNEL, wrapped);
      };
    },
  });
}

export function expose(bridge: { exposeInMainWorld(key: string, api: unknown): void }, ipc: IpcLike): void {
  bridge.exposeInMainWorld('forkbench', createBridge(ipc));
}

// Only inside Electron: under plain Node (the unit tests) `require('electron')` would try to download it.
if (process.versions.electron) {
  const electron = require('electron') as typeof import('electron');
  expose(electron.contextBridge, electron.ipcRenderer as unknown as IpcLike);
}
