import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callAsAgent } from '../../src-main/agents/agentRpc.js';
import { ThreadManager } from '../../src-main/window/threadManager.js';
import { WindowRouter } from '../../src-main/window/windowRouter.js';
import type { WindowMethod, WindowParams } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../../src-main/board/boardService.js';

/**
 * A real Thread behind its two real edges: the window's router (what Electron's IPC and serve's WebSocket
 * call) and the agents' (what the socket, the CLI and MCP call). Input is validated there, once; the engine
 * behind them takes what they validated.
 */
export async function boardEdges(prefix: string) {
  const root = fs.mkdtempSync(join(tmpdir(), `forkbench-${prefix}-`));
  fs.mkdirSync(join(root, 'project'));
  const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
  const host = await threads.open(join(root, 'project'));
  const router = new WindowRouter(threads);
  const board: BoardService = host.board;
  return {
    board,
    /** A window's call, as any window makes it: `key` filled in. */
    window: <M extends WindowMethod>(method: M, params: Omit<WindowParams<M>, 'key'> | Record<string, unknown>) => router.call(method, { key: host.key, ...params }, 'test-window'),
    /** An agent's call, as the socket hands it on once the agent's secret is checked. */
    agent: (agentId: string, method: string, params: Record<string, unknown>) => callAsAgent(board, agentId, method, params),
    async dispose(): Promise<void> {
      await threads.dispose();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
export type BoardEdges = Awaited<ReturnType<typeof boardEdges>>;
