/**
 * While `git worktree add` makes a grant's folder, that folder's HEAD is git's null id until its first ref
 * update is done, and any fetch into the clone meanwhile fails on it (`fatal: bad object
 * worktrees/T-2-6/HEAD`): seen in the two-host chaos run, where an approval's fetch of the remote's main met a
 * grant on the same host. The fetch is asked again once the folder is made, and lands.
 *
 * The window is held open for real: the add's first ref update waits at its start on a fifo the repository's
 * config includes for worktrees' git dirs (the host's git runs no hook to hold it with). Git's trace2 events
 * say when the host's fetch has run and how it ended.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { cloneOfBareRemote, gitSync, idleAgent } from '../../helpers/gitFixture.js';
import { waitFor } from '../../helpers/pty.js';
import { WorktreeGitGate } from '../../helpers/worktreeGitGate.js';
import { openTestHost } from '../../helpers/testHost.js';

const hosts: ThreadHost[] = [];
const dirs: string[] = [];
const traceBefore = process.env.GIT_TRACE2_EVENT;
const gates: WorktreeGitGate[] = [];
afterEach(async () => {
  // A git still held (the test failed before letting it go) is let go.
  for (const g of gates.splice(0)) g.release();
  if (traceBefore === undefined) delete process.env.GIT_TRACE2_EVENT;
  else process.env.GIT_TRACE2_EVENT = traceBefore;
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Exit codes of the `git fetch` processes in a trace2 event file, in the order they ended. */
function fetchExits(trace: string): number[] {
  let text = '';
  try {
    text = fs.readFileSync(trace, 'utf8');
  } catch {
    return [];
  }
  const fetches = new Set<string>();
  const codes: number[] = [];
  // Only whole lines: git may be writing the last one as it is read (a partial line is not JSON yet).
  const lines = text.split('\n');
  lines.pop();
  for (const line of lines) {
    if (!line) continue;
    const e = JSON.parse(line) as { event: string; sid: string; name?: string; code?: number };
    if (e.event === 'cmd_name' && e.name === 'fetch') fetches.add(e.sid);
    if (e.event === 'exit' && fetches.has(e.sid)) codes.push(e.code as number);
  }
  return codes;
}

describe("a fetch while a grant's folder is being made", () => {
  it('is asked again once the folder is made, and lands', async () => {
    const { root, bare, folder } = cloneOfBareRemote('fb-fetch-grant-');
    dirs.push(root);
    const gate = new WorktreeGitGate(folder, root);
    gates.push(gate);
    gate.arm();

    const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
    hosts.push(host);
    await host.board.run((e) => e.addTask({ title: 'grant me' }));
    const agent = await idleAgent(host);
    const c = await host.board.run((e) => e.claim(agent, 'T-1'));
    const token = (c.ok && c.value.token) as number;
    const handed = host.worktrees.worktreeOf('T-1', token);
    await waitFor(() => gate.entered(), 20_000, 'the add to reach its first ref update');
    const admin = join(folder, '.git', 'worktrees', `T-1-${token}`);
    expect(fs.readFileSync(join(admin, 'HEAD'), 'utf8').trim()).toBe('0'.repeat(40));

    const trace = join(root, 'trace.json');
    process.env.GIT_TRACE2_EVENT = trace;
    const fetched = host.worktrees.git!.review.remoteBase({ name: 'origin', url: bare }, 'main');
    const settled = fetched.then(
      () => 'resolved',
      (err: Error) => `rejected: ${err.message}`,
    );
    // The fetch has run and failed on the folder being made: git's own words, from its own trace.
    await waitFor(() => fetchExits(trace).length > 0, 20_000, 'the fetch to end');
    expect(fetchExits(trace)[0]).not.toBe(0);

    gate.release();
    expect(await settled).toBe('resolved');
    expect(await fetched).toBe(gitSync(bare, ['rev-parse', 'main']));
    expect(fetchExits(trace).at(-1)).toBe(0);
    expect((await handed)?.path).toBeTruthy();
  }, 60_000);
});
