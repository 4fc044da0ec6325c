import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../helpers/cli.js';
import { cliAs, Fixture, idleAgent } from '../../helpers/gitFixture.js';

const fx = new Fixture();
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

describe("the repository's own hooks, run by the host's git", () => {
  it('hold no terminal of any pane (node-pty leaves masters inheritable; the host starts such git with its stdio only)', async () => {
    const { host, folder } = await fx.host();
    const seen = join(fx.tmp(), 'fds.txt');
    // post-checkout runs in `git worktree add`, which the host runs for a grant.
    fs.writeFileSync(join(folder, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\nls -l /proc/$$/fd > '${seen}'\n`, { mode: 0o755 });
    await host.board.run((e) => e.addTask({ title: 'hooks' }));
    // Two panes are open, so the host holds two pty masters.
    await idleAgent(host);
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.code).toBe(0);
    const fds = fs.readFileSync(seen, 'utf8');
    expect(fds).toMatch(/ 0 -> /);
    // (git and the shell open a few of their own, the hook script among them; none is a terminal)
    expect(fds).not.toMatch(/ptmx|\/dev\/pts\//);
  });
});
