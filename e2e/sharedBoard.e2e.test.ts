import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { boardUrlFile, startPgCluster, type PgCluster } from '../test/helpers/pgCluster.js';
import { SHOTS, type Served, type WindowSession, withQuery } from './harness.js';
import { VIEWPORT, windowForFile } from './windowForFile.js';
import { poorContrast, visibleTexts } from './pageAudit.js';
import { dragCard, launchFromMenu, screenText, typeIn, confirmAfterDrop } from './pageActions.js';

/**
 * Issue 31, the window across hosts, in Chromium: two `forkbench serve` processes (each its own data, runtime
 * and project folder, as two machines) on one board in a private PostgreSQL, a shell agent on each. A's agent
 * claims T-1 with the real CLI; in A's page a person drags T-1's card onto the tab of B's agent (listed in A's
 * window as "on HOST", with no terminal here); B's window shows its agent holding T-1 and B's pane has the
 * assignment typed in; A's agent's next write is refused `stale-token` by the CLI. A's page never asks for the
 * pane of B's agent (no agent.* frame on its WebSocket names it).
 */
/** The board both hosts open by name (their project folders differ, so no git remote names it). */
const BOARD_NAME = 'e2e shared board';
/** Another host's agents are re-read every poll (2 s) and B's agent is recorded at B's next one: room for a
 *  loaded machine (2 cores shared by 4). */
const PEER_LISTED_MS = 20_000;
/** A grant made on A reaches B by NOTIFY (or its poll), then B's typist waits for a quiet pane (1.5 s). */
const ACROSS_HOSTS_MS = 20_000;
/** A shell's answer to a typed CLI call, which reaches the board through its host and PostgreSQL. */
const CLI_ANSWER_MS = 20_000;

let pgc: PgCluster;
let a: WindowSession;
let b: Served;
let pageA: Page;
let pageB: Page;

let args: string[];

const win = windowForFile(async () => {
  pgc = await startPgCluster();
  win.after(() => pgc?.dispose());
  const url = await pgc.createDatabase('e2e');
  args = ['--board-url-file', boardUrlFile(pgc.root, url), '--board-name', BOARD_NAME];
  return { serve: { args } };
}, 120_000);

beforeAll(async () => {
  a = win.session;
  b = await win.serve({ args });
  pageA = a.page;
  pageB = await a.browser.newPage({ viewport: VIEWPORT });
  pageB.on('pageerror', (e) => console.error('page B error:', e.message));
}, 120_000);

/** A pane's text with the terminal's wrapping undone, so a long line the host typed reads as one. */
const paneLine = async (page: Page, agentId: string) => (await screenText(page, agentId)).replace(/\n/g, '');

async function opened(page: Page, served: Served): Promise<void> {
  await page.goto(withQuery(served.url, 'debug=1'));
  await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
  await page.getByTestId('thread-goal').waitFor();
}

describe('two hosts on one PostgreSQL board, in Chromium', () => {
  it('a task dragged from host A’s agent to host B’s: B holds it and is told in its pane; A’s next write is refused stale-token', async () => {
    // Every frame A's page sends: none may be a pane call for B's agent.
    const sentByA: string[] = [];
    pageA.on('websocket', (ws) => ws.on('framesent', (f) => typeof f.payload === 'string' && sentByA.push(f.payload)));
    await opened(pageA, a.served);
    await opened(pageB, b);

    await pageA.getByTestId('add-task-title').fill('shared work');
    await pageA.getByTestId('add-task-submit').click();
    // One backlog: B's window has the task A's window added.
    await expect.poll(() => pageB.getByTestId('card-T-1').getAttribute('data-state'), { timeout: ACROSS_HOSTS_MS }).toBe('open');

    const agentA = await launchFromMenu(pageA);
    // B's window lists A's agent before B launches its own (so B's new tab is the only one that comes next).
    await pageB.getByTestId(`agent-tab-${agentA}`).waitFor({ timeout: PEER_LISTED_MS });
    // Both hosts run on this machine, under one machine name: each has a name of its own on the board, the
    // machine's with a tag of its host id (issue 45), so "shell 1 on …" says which.
    const sameMachine = new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{4}$`);
    const hostA = (await pageB.getByTestId(`agent-tab-${agentA}`).getAttribute('data-host')) ?? '';
    expect(hostA).toMatch(sameMachine);
    const agentB = await launchFromMenu(pageB);
    await typeIn(pageA, agentA, 'forkbench claim T-1');
    await expect.poll(() => pageA.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: CLI_ANSWER_MS }).toBe(agentA);

    // A's window lists B's agent: its host named, no × to close it, a drop target like any tab.
    const remoteTab = pageA.getByTestId(`agent-tab-${agentB}`);
    await remoteTab.waitFor({ timeout: PEER_LISTED_MS });
    const hostB = (await remoteTab.getAttribute('data-host')) ?? '';
    expect(hostB).toMatch(sameMachine);
    expect(hostB).not.toBe(hostA);
    expect(await pageA.getByTestId(`agent-host-${agentB}`).textContent()).toBe(`on ${hostB}`);
    expect(await remoteTab.getAttribute('role')).toBe('tab');
    expect(await pageA.getByTestId(`close-${agentB}`).count()).toBe(0);
    expect(await pageA.getByTestId(`agent-host-${agentA}`).count()).toBe(0);
    await a.shot('shared-01-remote-tab');

    // The drag, from A's agent to B's, in A's page.
    await dragCard(pageA, 'T-1', `agent-tab-${agentB}`);
    // T-1 is A's agent's work in progress: the drop asks first (issue 32, finding 6)
    await confirmAfterDrop(pageA);
    await expect.poll(() => pageA.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: 10_000 }).toBe(agentB);
    // B's window: its own agent holds it, and the assignment was typed into its pane by B's host.
    await expect.poll(() => pageB.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: ACROSS_HOSTS_MS }).toBe(agentB);
    await expect.poll(() => pageB.getByTestId(`agent-tab-${agentB}`).getAttribute('data-claims'), { timeout: ACROSS_HOSTS_MS }).toBe('1');
    await pageB.getByTestId(`agent-tab-${agentB}`).click();
    await expect.poll(() => paneLine(pageB, agentB), { timeout: ACROSS_HOSTS_MS }).toMatch(/You have been assigned T-1 "shared work" .*fencing token 2/);
    await pageB.screenshot({ path: join(SHOTS, 'shared-02-assigned-on-b.png') });

    // In A's window the tab of B's agent counts its claim down; selected, it shows where it runs and what it holds.
    await expect.poll(() => remoteTab.getAttribute('data-claims'), { timeout: 10_000 }).toBe('1');
    await pageA.getByTestId(`agent-countdown-${agentB}`).waitFor();
    await remoteTab.click();
    expect(await remoteTab.getAttribute('aria-selected')).toBe('true');
    const panel = pageA.getByTestId(`remote-agent-${agentB}`);
    await panel.waitFor();
    const name = await remoteTab.getAttribute('data-name');
    expect(await pageA.getByTestId(`remote-agent-where-${agentB}`).textContent()).toBe(`${name} runs on ${hostB}. Its terminal is in that host’s window.`);
    expect(await pageA.getByTestId(`remote-claims-${agentB}`).textContent()).toContain('T-1 shared work');
    await pageA.getByTestId('remote-countdown-T-1').waitFor();
    expect(await pageA.getByTestId(`terminal-${agentB}`).count()).toBe(0);
    expect(await pageA.getByTestId('terminal-find-hint').count()).toBe(0);
    expect(poorContrast([...(await visibleTexts(pageA, `[data-testid="remote-agent-${agentB}"]`)), ...(await visibleTexts(pageA, `[data-testid="agent-tab-${agentB}"]`))])).toEqual([]);
    await a.shot('shared-03-remote-panel');

    // A's agent was told in its pane; its next write is refused by the board, in the CLI's words and exit code.
    // ...naming who has it now by its host too (A has a "shell 1" of its own).
    await expect.poll(() => paneLine(pageA, agentA), { timeout: ACROSS_HOSTS_MS }).toContain(`was taken from you by a person in the Forkbench window and given to ${name} on ${hostB}:`);
    await typeIn(pageA, agentA, 'forkbench note T-1 "still mine?"; echo "NOTE=$?=END"');
    await expect.poll(() => screenText(pageA, agentA), { timeout: CLI_ANSWER_MS }).toMatch(/NOTE=\d+=END/);
    const out = await screenText(pageA, agentA);
    expect(out).toContain('forkbench: refused (stale-token)');
    expect(out).toContain('NOTE=3=END');
    await a.shot('shared-04-stale-token');

    // Not one pane call for B's agent went out of A's page: its pane is B's.
    const paneCalls = sentByA.map((p) => JSON.parse(p) as { method?: string; params?: { agentId?: string } }).filter((m) => m.method?.startsWith('agent.') && m.params?.agentId === agentB);
    expect(paneCalls).toEqual([]);
    // ...while A's own agent's were made (the check sees frames at all).
    expect(sentByA.some((p) => p.includes('"agent.input"') && p.includes(agentA))).toBe(true);

    // B stops (Ctrl-C): A's window says so once, by B's name, and no longer lists B's agent (issue 45).
    expect(await b.stop()).toBe(0);
    const left = pageA.getByTestId('host-notice').filter({ hasText: `Host ${hostB} left the board` });
    await expect.poll(() => left.count(), { timeout: ACROSS_HOSTS_MS }).toBe(1);
    expect(await left.innerText()).toContain(`${hostB} stopped and left the shared board: its agent is no longer listed here.`);
    await expect.poll(() => pageA.getByTestId(`agent-tab-${agentB}`).count(), { timeout: PEER_LISTED_MS }).toBe(0);
    await a.shot('shared-05-host-left');
  }, 180_000);
});
