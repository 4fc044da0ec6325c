import { afterAll, expect, it } from 'vitest';
import type { BoardEvent } from '../src-shared/board/events.js';
import type { TaskCostView, ThreadCostView } from '../src-shared/usage/costView.js';
import type { TokenCounts } from '../src-shared/usage/usage.js';
import { MCP_SERVER_NAME } from '../src-main/agents/profiles.js';
import { startFakeAnthropic, type Conversation, type FakeAnthropic, type Script, type Turn, type Usage } from '../test/helpers/realCli/fakeAnthropic.js';
import { claudeEnv, seedClaudeHome } from '../test/helpers/realCli/claudeCode.js';
import { describeRealCli, squeeze } from '../test/helpers/realCli/harness.js';
import { screenText } from './pageActions.js';
import { openRealCliWindow, type RealCliWindow } from './realCliWindow.js';
import { windowOn } from './windowClient.js';
import { windowForFile } from './windowForFile.js';
import { withQuery } from './harness.js';

/**
 * Issue 47's Must-show, in the window: the real Claude Code CLI runs in a real pane of `forkbench serve`'s window
 * in Chromium, talking to the fake Anthropic API, and spends turns before its claim on T-1 (its overhead) and
 * under it. The host reads them from Claude Code's own transcript. The card, the details panel and the shipped
 * `forkbench cost T-1 --json` (typed in a shell pane of the same window) show exactly the tokens, by kind, that
 * the fake reported for the turns it answered after the claim was granted, in all and for the agent; the
 * Thread's `forkbench cost --json` shows the turns before it as the agent's overhead. A budget in tokens, set in
 * the details panel, is crossed at 80 % by turn 3 and spent by turn 4: the window says so after exactly those
 * turns, and the pane is told (Claude Code gets the host's words as its next message and answers them).
 */

/** A board tool's name as Claude Code exposes it. */
const mcp = (tool: string) => `mcp__${MCP_SERVER_NAME}__${tool}`;

const HELLO_ASK = 'Say hello before you take any work.';
const HELLO = 'Hello: no task taken yet.';
const CLAIM_ASK = 'Take task T-1 from the board.';
const stepAsk = (s: number) => `Go on with step ${s} of T-1.`;
/** What the host types into the pane once T-1's budget is spent (budgetWatch.ts): the script answers it. */
const TOLD = 'has spent its budget';

/** The model's answers under the claim, in order: the one after the claim's result, steps 2 to 4 as the person
 *  asks for each, and its answer to the host's stop. Each reports the usage USAGE_UNDER_CLAIM gives it. */
const UNDER_CLAIM = ['T-1 is mine; step 1 done.', 'Step 2 of T-1 done.', 'Step 3 of T-1 done.', 'Step 4 of T-1 done.', 'Stopping work on T-1 until the person decides.'] as const;

/**
 * The usage the fake reports for the `s`th answer under the claim (1-based): fixed by the script, so the budget
 * can be set before the turns are played (the fake's own numbering would shift with the side calls Claude Code
 * makes on its own), and different in every kind and turn, so a sum says which turns went into it. Billed
 * tokens (input, output, cache read and write) 4,000 + 4s: 4,004, 4,008, 4,012, 4,016, 4,020.
 */
const usageUnderClaim = (s: number): Usage => ({ input_tokens: 1000 + s, output_tokens: 200 + s, cache_read_input_tokens: 2500 + s, cache_creation_input_tokens: 300 + s });

/**
 * T-1's budget, in tokens. Spent after each turn: 4,004, 8,012, 12,024, 16,040. 80 % of it is 12,000: turn 2's
 * 8,012 is under, turn 3's 12,024 past it (the notice); turn 3's is under 15,000 and turn 4's 16,040 past it (the
 * stop). Turn 2, between nothing and the notice, shows the window says nothing early.
 */
const BUDGET = 15_000;
const NOTICE_AFTER = 3;
const STOP_AFTER = 4;

/** Which of the test's messages a conversation answers: the one said last (Claude Code adds its own reminders
 *  around a person's words, so a message is found by its text, not its place). */
function lastSaid(c: Conversation): string {
  const said = JSON.stringify(c.body.messages);
  const phrases = [HELLO_ASK, CLAIM_ASK, ...[2, 3, 4].map(stepAsk), TOLD];
  return phrases.reduce((best, p) => (said.lastIndexOf(p) > said.lastIndexOf(best) ? p : best));
}

const script: Script = {
  // The agent's conversation carries the board instructions the profile appends to the system prompt.
  isAgent: (body) => JSON.stringify(body.system ?? '').includes('Forkbench') && (body.tools ?? []).some((t) => t.name === 'Bash'),
  next(c): Turn {
    const asked = lastSaid(c);
    if (asked === HELLO_ASK) return { text: HELLO };
    if (asked === TOLD) return { text: UNDER_CLAIM[4] };
    const step = [2, 3, 4].find((s) => asked === stepAsk(s));
    if (step) return { text: UNDER_CLAIM[step - 1]! };
    const claim = c.calls.find((call) => call.name === mcp('claim'));
    if (claim) return claim.isError ? { text: `The claim failed: ${claim.result}` } : { text: UNDER_CLAIM[0] };
    // Claude Code defers MCP tools: the names are listed to the model, the schemas fetched with ToolSearch.
    const offered = c.body.tools?.find((t) => t.name === mcp('claim'));
    if ((!offered || offered.defer_loading) && !c.calls.some((call) => call.name === 'ToolSearch') && c.tools.includes('ToolSearch')) {
      return { tool: 'ToolSearch', input: { query: `select:${mcp('claim')}` } };
    }
    return { tool: mcp('claim'), input: { taskId: 'T-1' } };
  },
  usage(_c, turn) {
    const s = 'text' in turn && turn.text ? UNDER_CLAIM.indexOf(turn.text as (typeof UNDER_CLAIM)[number]) : -1;
    return s >= 0 ? usageUnderClaim(s + 1) : null;
  },
};

const kindsOf = (u: Usage): TokenCounts => ({ input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens, reasoning: 0 });
const billed = (t: TokenCounts) => t.input + t.output + t.cacheRead + t.cacheWrite;
const sumKinds = (ts: readonly TokenCounts[]): TokenCounts =>
  ts.reduce((a, t) => ({ input: a.input + t.input, output: a.output + t.output, cacheRead: a.cacheRead + t.cacheRead, cacheWrite: a.cacheWrite + t.cacheWrite, reasoning: a.reasoning + t.reasoning }), {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    reasoning: 0,
  });
/** Billed tokens of the first `n` turns under the claim, as the fake fixes them. */
const spentAfter = (n: number) => Array.from({ length: n }, (_, i) => billed(kindsOf(usageUnderClaim(i + 1)))).reduce((a, b) => a + b, 0);
const en = (n: number) => n.toLocaleString('en');

describeRealCli('claude', 'the real Claude Code in the window: its cost per task and its budget (issue 47)', () => {
  let api: FakeAnthropic | undefined;
  let session: RealCliWindow | undefined;
  // Registered before the window's own afterAll, so it runs after it (vitest runs after-hooks last-in first-out):
  // the fake server goes once no pane talks to it.
  afterAll(() => api?.close());
  const win = windowForFile(async () => {
    api = await startFakeAnthropic(script);
    session = await openRealCliWindow({ env: claudeEnv(api.url), seed: (home, folder) => seedClaudeHome(home, 'default', { [folder]: {} }) });
    return session;
  });

  let claude = '';
  let name = '';
  let key = '';

  /** What the pane's terminal in the window shows, and everything it showed (scrollback). */
  const screen = () => screenText(win.page, claude);
  /** What a failing wait should tell: the fake's requests, what the proxy trap refused and the pane's screen. */
  const tell = async () => `--- the fake's requests ---\n${api!.summary()}\n--- proxy trap ---\n${session!.trap.attempts.join('\n')}\n--- screen ---\n${(await screen()).split('\n').slice(-40).join('\n')}`;
  /** Waits until the pane shows `text` (however the TUI wrapped it), telling the screen if it never does. */
  const shows = async (text: string, timeout: number) => {
    try {
      await expect.poll(async () => squeeze(await screen()).includes(squeeze(text)), { timeout }).toBe(true);
    } catch (err) {
      throw new Error(`the pane never showed "${text}": ${(err as Error).message}\n${await tell()}`);
    }
  };
  /**
   * Says `text` to Claude Code as a person does in the window: types it into the pane's terminal, and presses
   * Enter once the prompt box shows it (typed in one go with the Enter, a TUI can take the keys for a paste, in
   * which an Enter is a new line rather than "send").
   */
  const say = async (text: string) => {
    const { page } = win;
    await page.getByTestId(`agent-tab-${claude}`).click();
    await page.getByTestId(`terminal-${claude}`).click();
    await page.keyboard.type(text);
    await shows(text, 10_000);
    await page.keyboard.press('Enter');
  };
  /** The card's reading of T-1's spend, once its figures say `turns` turns. */
  const cardAfter = async (turns: number) => {
    const label = () => win.card('T-1').getByTestId('card-cost-T-1').getAttribute('aria-label', { timeout: 1_000 }).catch(() => null);
    // Read within a poll or two of the turn (UsageWatch.pollMs: 3 s), on a busy machine.
    await expect.poll(async () => /tokens in (\d+) turns?/.exec((await label()) ?? '')?.[1], { timeout: 20_000 }).toBe(String(turns));
    return (await label())!;
  };

  it('turns before the claim are overhead; under it the window counts each turn as it is read, and the budget’s 80% notice and stop come after exactly turns 3 and 4, the pane told', async () => {
    const { page } = win;
    await page.goto(withQuery(win.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    key = thread!.key;
    await host.call('task.add', { key, title: 'Port the parser', writeKey: 'cost-realcli-add-1' });
    claude = (await host.call('agent.launch', { key, profile: 'claude', cols: 120, rows: 40 })).id;
    host.close();
    const tab = page.getByTestId(`agent-tab-${claude}`);
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    name = (await tab.getAttribute('data-name'))!;

    // T-1's budget, set in its details panel before any turn: in tokens, the currency of a flat-rate plan.
    await win.card('T-1').focus();
    await page.keyboard.press('Enter');
    const details = page.getByTestId('task-details');
    await details.waitFor();
    await details.getByTestId('details-budget-unit').selectOption('tokens');
    await details.getByTestId('details-budget-amount').fill(String(BUDGET));
    await details.getByTestId('details-budget-amount').press('Enter');
    const w = await windowOn(win.served);
    await expect.poll(async () => (await w.call('cost.task', { key, taskId: 'T-1' })).budget?.budget).toEqual({ unit: 'tokens', limit: BUDGET });
    w.close();
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });

    // Claude Code's prompt box, in the window's terminal.
    try {
      await expect.poll(async () => /^❯/m.test(await screen()), { timeout: 30_000 }).toBe(true);
    } catch (err) {
      throw new Error(`no Claude Code prompt: ${(err as Error).message}\n${await tell()}`);
    }

    // Before the claim: the agent's own overhead, on no card.
    await say(HELLO_ASK);
    await shows(HELLO, 30_000);

    await say(CLAIM_ASK);
    await expect.poll(() => win.card('T-1').getAttribute('data-state'), { timeout: 30_000 }).toBe('claimed');
    await shows(UNDER_CLAIM[0], 30_000);
    expect(await cardAfter(1)).toContain(`${en(spentAfter(1))} tokens in 1 turn`);
    const alert = page.getByTestId('budget-alert-T-1');
    expect(await alert.count()).toBe(0);

    for (let s = 2; s <= STOP_AFTER; s++) {
      await say(stepAsk(s));
      await shows(UNDER_CLAIM[s - 1]!, 30_000);
      expect(await cardAfter(s)).toContain(`${en(spentAfter(s))} tokens in ${s} turns`);
      if (s < NOTICE_AFTER) expect(await alert.count(), `no budget line after turn ${s}`).toBe(0);
      else if (s < STOP_AFTER) {
        await expect.poll(() => alert.getAttribute('data-level', { timeout: 1_000 }).catch(() => null), { timeout: 5_000 }).toBe('notice');
        expect(await alert.getByTestId('budget-alert-T-1-text').textContent()).toBe(`T-1 has spent ${en(spentAfter(s))} of ${en(BUDGET)} tokens: past 80% of its budget.`);
      } else {
        await expect.poll(() => alert.getAttribute('data-level', { timeout: 1_000 }).catch(() => null), { timeout: 5_000 }).toBe('stop');
        expect(await alert.getByTestId('budget-alert-T-1-text').textContent()).toBe(`T-1 reached its budget: ${en(spentAfter(s))} of ${en(BUDGET)} tokens. It is not dispatched again, and its agent was told.`);
      }
    }
    await win.shot('cost-realcli-01-budget-reached');

    // The pane is told: the host types its words into Claude Code's prompt, the model gets them as the next
    // message, and its answer (a turn under the claim too) is the fifth.
    const told = `T-1 "Port the parser" has spent its budget (${en(spentAfter(STOP_AFTER))} of ${en(BUDGET)} tokens). Stop working on T-1 now and wait`;
    await shows(told, 30_000);
    await shows(UNDER_CLAIM[4], 30_000);
    const answered = api!.turns.find((p) => p.turn.text === UNDER_CLAIM[4]);
    expect(JSON.stringify(answered?.conversation.body.messages.at(-1))).toContain(told.replace(/"/g, '\\"'));
    expect(await cardAfter(5)).toContain(`${en(spentAfter(5))} tokens in 5 turns`);
    expect(await alert.getAttribute('data-level')).toBe('stop');
    expect(session!.trap.attempts).toEqual([]);
  }, 240_000);

  /** The fake's agent turns, split at T-1's grant: those it answered before (overhead) and after (under the claim). */
  async function playedAroundTheClaim() {
    const w = await windowOn(win.served);
    const history = await w.call('task.history', { key, taskId: 'T-1' });
    w.close();
    const grant = history.find((e): e is Extract<BoardEvent, { kind: 'grant' }> => e.kind === 'grant' && e.agentId === claude);
    expect(grant).toBeDefined();
    const played = api!.turns.map((p) => p.conversation.reply!);
    return { before: played.filter((r) => r.at < grant!.at), under: played.filter((r) => r.at > grant!.at) };
  }

  it('the details panel shows exactly the tokens by kind the fake reported for the turns under the claim, in all and for the agent', async () => {
    const { page } = win;
    const { under } = await playedAroundTheClaim();
    // The turns the fake answered after the grant are the five answers under the claim, each with its usage.
    expect(under.map((r) => r.usage)).toEqual([1, 2, 3, 4, 5].map(usageUnderClaim));
    const want = sumKinds(under.map((r) => kindsOf(r.usage)));

    await win.card('T-1').focus();
    await page.keyboard.press('Enter');
    const details = page.getByTestId('task-details');
    await details.waitFor();
    const cost = details.getByTestId('details-cost');
    expect(await cost.getByTestId('details-cost-turns').textContent()).toBe(`${en(billed(want))} tokens in 5 turns`);
    const kinds = Object.fromEntries(await Promise.all((['input', 'cacheRead', 'cacheWrite', 'output', 'reasoning'] as const).map(async (k) => [k, await cost.getByTestId(`details-cost-${k}`).textContent()])));
    expect(kinds).toEqual({ input: en(want.input), cacheRead: en(want.cacheRead), cacheWrite: en(want.cacheWrite), output: en(want.output), reasoning: '0' });
    expect(await cost.getByTestId(`details-cost-agent-${claude}`).locator('th').textContent()).toBe(name);
    expect(await cost.getByTestId(`details-cost-agent-tokens-${claude}`).textContent()).toBe(en(billed(want)));
    expect(await cost.getByTestId('details-cost-claim-count').textContent()).toBe('1 claim');
    await win.shot('cost-realcli-02-details');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });
  }, 60_000);

  it('`forkbench cost T-1 --json`, typed in a shell pane of the window, gives the same figures, per agent too; `forkbench cost --json` the turns before the claim as the agent’s overhead', async () => {
    const { page } = win;
    const { before, under } = await playedAroundTheClaim();
    const want = sumKinds(under.map((r) => kindsOf(r.usage)));
    const overhead = sumKinds(before.map((r) => kindsOf(r.usage)));
    // The hello and the turns that led to the claim (a ToolSearch where Claude Code defers the board's tools).
    expect(before.length).toBeGreaterThanOrEqual(2);

    const host = await windowOn(win.served);
    const shell = (await host.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 })).id;
    host.close();
    await expect.poll(() => page.getByTestId(`agent-tab-${shell}`).getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    /** The JSON a `forkbench cost` command prints, read off the shell pane's screen: base64 between two marks
     *  (the marks quoted apart in the command, so its echo is not taken for them), so the terminal's wrapping
     *  cannot cut a line in the middle of a string. */
    const costJson = async <T,>(args: string, mark: string): Promise<T> => {
      await page.getByTestId(`agent-tab-${shell}`).click();
      await page.getByTestId(`terminal-${shell}`).click();
      await page.keyboard.type(`echo "${mark}""-BEGIN"; forkbench cost ${args} | base64 -w0; echo; echo "${mark}""-END"`);
      await page.keyboard.press('Enter');
      const framed = new RegExp(`\\n${mark}-BEGIN\\n([A-Za-z0-9+/=\\n]*)\\n${mark}-END`);
      await expect.poll(async () => framed.test(await screenText(page, shell)), { timeout: 15_000 }).toBe(true);
      const b64 = framed.exec(await screenText(page, shell))![1]!.replace(/\n/g, '');
      return (JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as { result: T }).result;
    };

    const { task } = await costJson<{ task: TaskCostView }>('T-1 --json', 'TASKCOST');
    expect(task).toMatchObject({ taskId: 'T-1', state: 'claimed', tokens: want, turns: 5, claims: 1, budget: { budget: { unit: 'tokens', limit: BUDGET } } });
    expect(task.byAgent).toEqual([expect.objectContaining({ agentId: claude, tokens: want, turns: 5, lastActed: 0 })]);
    // The money is the same figure the window shows (the bundled price table's, for the model Claude Code named).
    const { thread } = await costJson<{ thread: ThreadCostView }>('--json', 'THREADCOST');
    const agent = thread.agents.find((a) => a.key === claude);
    expect(agent).toMatchObject({ label: 'claude', tokens: sumKinds([want, overhead]), turns: 5 + before.length, overhead: { tokens: overhead, turns: before.length } });
    expect(thread.tasks.map((r) => [r.key, r.tokens])).toEqual([['T-1', want]]);
    await win.shot('cost-realcli-03-cli');
  }, 60_000);
});
