/**
 * Issue 29, finding 7: an agent set `core.fsmonitor` in its worktree's config, and when the person clicked
 * Diff (and again during approval's clean-up) the host's own `git status` ran the agent's program, outside
 * any pane. The host's git now runs no program the repository's or a worktree's config names: fsmonitor,
 * filter drivers (clean, smudge, process), diff drivers' textconv, merge drivers, ssh, credential helpers.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentEnv, cliAs, claimedTask, Fixture, sh } from '../../helpers/gitFixture.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
afterEach(() => fx.cleanup());

describe('the host’s git runs no program an agent named in git config', () => {
  it('fsmonitor, filters and textconv set by an agent run neither on Diff nor on approval', async () => {
    const { host, a, token, wt, root } = await claimedTask(fx);
    const marks = join(root, 'ran');
    const evil = join(root, 'evil.sh');
    // A filter passes its input through; the fsmonitor hook says it knows nothing (git then looks itself).
    fs.writeFileSync(evil, `#!/bin/sh\necho "$*" >> '${marks}'\n[ "$1" = fsmonitor ] && exit 1\nexec cat\n`, { mode: 0o755 });
    const env = agentEnv(host, a);
    // The work, committed before any driver is defined (so the agent's own git runs none of them).
    fs.writeFileSync(join(wt, '.gitattributes'), '*.txt filter=evil diff=evil merge=evil\n');
    fs.writeFileSync(join(wt, 'notes.txt'), 'line one\nline two\n');
    expect((await sh(wt, 'git add -A && git commit -qm "the change"', env)).code).toBe(0);
    // Then the trap: in its worktree's config and the repository's shared one.
    const set = await sh(
      wt,
      [
        `git config --worktree core.fsmonitor '${evil} fsmonitor'`,
        `git config filter.evil.clean '${evil} clean'`,
        `git config filter.evil.smudge '${evil} smudge'`,
        `git config diff.evil.textconv '${evil} textconv'`,
        `git config merge.evil.driver '${evil} merge %O %A %B'`,
      ].join(' && '),
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    fs.writeFileSync(join(wt, 'notes.txt'), 'line one\nline two\nuncommitted\n');
    // The control: a plain git in that worktree runs it (the trap is real).
    await sh(wt, 'git status --porcelain >/dev/null 2>&1', env);
    expect(fs.existsSync(marks), 'a plain git status ran the agent’s program').toBe(true);
    fs.rmSync(marks);

    fs.writeFileSync(join(wt, 'notes.txt'), 'line one\nline two\n');
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    const d = await host.worktrees.require().review.diff('T-1');
    expect(d.patch).toContain('+line two');
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(fs.existsSync(marks) ? fs.readFileSync(marks, 'utf8') : '', 'what the host’s git ran of the agent’s').toBe('');
  });
});
