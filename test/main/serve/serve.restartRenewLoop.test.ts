import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentInfo, WorktreeInfo } from '../../../src-shared/protocol/windowApi.js';
import { GIT_IDENTITY, makeRepo } from '../../helpers/gitFixture.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

const { at, start } = servedProjectOfThisFile('fb-renew-loop-');

/** Serve restarts while the agent renews: each one must be seen by this many more calls before the next. */
const CALLS_PER_RESTART = 5;
const RESTARTS = 3;
/** Renew loops at once, none pausing: the CLI polls a board that is away every 200 ms, and a restart's gap
 *  (between the socket listening and the agents being known) was tens of ms, so several pollers make it
 *  likely that one of them calls inside it. */
const LOOPS = 4;

function paneText(s: ServeProc, agentId: string): string {
  return s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
}

const codesIn = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('a kept agent renewing across board host restarts', () => {
  it(`serve killed -9 and started again ${RESTARTS} times while a shell agent renews in a loop: none is answered unauthorized: each waits for the board, retries, and renews`, async () => {
    const { key, project } = at;
    // A git project: the board host fences its folder as it opens (git runs), which is when an agent calling
    // the moment the socket listens was once answered as a stranger.
    Object.assign(process.env, GIT_IDENTITY);
    makeRepo(project);
    let serve = await start();
    await serve.window.call('task.add', { key, title: 'renewed all along' });
    const a: AgentInfo = await serve.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    await serve.window.call('agent.input', { key, agentId: a.id, data: `forkbench claim T-1 && echo "CLAIMED"-A\r` });
    await waitFor(() => paneText(serve, a.id).includes('CLAIMED-A\r'), 20_000, 'the claim');
    // The agent's own claims folder (beside T-1's worktree): what a contained pane writes (its /tmp is private).
    const worktrees: WorktreeInfo[] = await serve.window.call('worktree.list', { key });
    const mine = dirname(worktrees.find((w) => w.taskId === 'T-1')!.path);
    const codes = join(mine, 'renew-codes.txt');
    const errorsFile = join(mine, 'renew-errors.txt');
    // Each renew's exit status, one per line: 0 renewed, 3 refused as an unknown secret, 4 unreachable.
    await serve.window.call('agent.input', {
      key,
      agentId: a.id,
      data: `${Array.from({ length: LOOPS }, () => `(while :; do forkbench renew T-1 >/dev/null 2>>'${errorsFile}'; echo $? >> '${codes}'; done) &`).join(' ')}\r`,
    });
    for (let i = 0; i < RESTARTS; i++) {
      const seen = codesIn(codes).length;
      await waitFor(() => codesIn(codes).length >= seen + CALLS_PER_RESTART, 20_000, `renews before restart ${i + 1}`);
      serve.proc.kill('SIGKILL');
      await serve.exit;
      expect(alive(a.pid!)).toBe(true);
      serve = await start();
    }
    const seen = codesIn(codes).length;
    await waitFor(() => codesIn(codes).length >= seen + CALLS_PER_RESTART, 20_000, 'renews after the last restart');
    const all = codesIn(codes);
    const errors = fs.existsSync(errorsFile) ? fs.readFileSync(errorsFile, 'utf8') : '';
    const why = `exit statuses ${all.join(',')}; stderr: ${errors.slice(-800)}`;
    // Never refused as a stranger; a call the kill cut off in flight is sent again with its key to the next
    // serve (the CLI retries a write whose answer was lost): every renew succeeds.
    expect(all.filter((c) => c !== '0'), why).toEqual([]);
    const snap = await serve.window.call('thread.snapshot', { key });
    expect(snap.board.tasks.find((t: { id: string }) => t.id === 'T-1')?.claim?.agentId).toBe(a.id);
    serve.proc.kill('SIGINT');
    expect(await serve.exit).toBe(0);
  }, 180_000);
});
