/**
 * Issue 47, item 3: an agent's own report of a turn (`forkbench usage`, typed in a real shell pane) is held to
 * what one real turn can be (reportBounds.ts), so a report cannot exhaust a budget at once: past a bound it is
 * refused with the bound named, nothing is recorded and the budget is untouched; at the bound it is counted.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ReportBounds } from '../../../src-shared/usage/reportBounds.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { hostFixture } from '../../helpers/hosts.js';

const fixture = hostFixture('usage-report-bounds');
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

/** Type `command` at the shell's prompt and wait for its output up to `mark` and its exit status. */
async function typed(host: ThreadHost, agentId: string, command: string, mark: string): Promise<{ out: string; status: number }> {
  // The mark is echoed with a quote in it as typed, so only the shell's own output matches `MARK-<status>`.
  const seen = paneText(host, agentId, new RegExp(`${mark}-(\\d+)`));
  host.roster.relay.input(agentId, `${command}; echo "${mark}"-$?\r`);
  const out = await seen;
  return { out, status: Number(new RegExp(`${mark}-(\\d+)`).exec(out)?.[1]) };
}

const usageLog = async (host: ThreadHost) => (await host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');

describe('a self-reported turn is bounded (issue 47)', () => {
  it('past a bound it is refused from the pane, naming the bound, with nothing recorded; at the bound it is counted', async () => {
    const host = await fixture.open({ typingQuietMs: 300 });
    const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'journal' });
    const key = thread.key;
    await thread.addTask({ key, title: 'scripted work' });
    const shell = await thread.launchAgent({ key, profile: 'shell', cols: 200, rows: 40 });
    await thread.assignTask({ key, taskId: 'T-1', agentId: shell.id });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 1000 } });

    const tooMany = await typed(host, shell.id, `forkbench usage --input ${ReportBounds.maxTokensPerKind + 1} --output 1`, 'TOKENS');
    expect(tooMany.status).not.toBe(0);
    expect(tooMany.out).toContain("--input takes a whole number of tokens up to 10,000,000 (one turn's most), not '10000001'");
    const tooDear = await typed(host, shell.id, 'forkbench usage --input 10 --output 1 --cost 999999', 'MONEY');
    expect(tooDear.status).not.toBe(0);
    expect(tooDear.out).toContain("--cost takes US dollars up to 100 (one turn's most), not '999999'");
    expect(await usageLog(host)).toEqual([]);
    expect(host.board.state.tasks.get('T-1')?.cost ?? null).toBeNull();

    // At the bounds: one turn, counted to the task it holds.
    const recorded = nextEvent(host, (e) => e.kind === 'usage');
    const most = await typed(host, shell.id, `forkbench usage --input ${ReportBounds.maxTokensPerKind} --output 1 --cost ${ReportBounds.maxUsd} --id at-most`, 'MOST');
    expect(most.status).toBe(0);
    await recorded;
    expect(await thread.taskCost({ key, taskId: 'T-1' })).toMatchObject({ usd: 100, turns: 1, tokens: { input: 10_000_000, output: 1 } });
  }, 60_000);
});
