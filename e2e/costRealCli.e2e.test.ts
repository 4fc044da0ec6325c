import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import type { BoardEvent } from '../src-shared/board/events.js';
import type { TaskCostView, ThreadCostView } from '../src-shared/usage/costView.js';
import type { TokenCounts } from '../src-shared/usage/usage.js';
import { MCP_SERVER_NAME } from '../src-main/agents/profiles.js';
import { startFakeAnthropic, type FakeAnthropic, type Script, type Turn, type Usage } from '../test/helpers/realCli/fakeAnthropic.js';
import { startFakeResponses, type Conversation as ResponsesConversation, type FakeResponses, type ResponsesUsage, type Turn as ResponsesTurn } from '../test/helpers/realCli/fakeOpenAiResponses.js';
import { claudeEnv, seedClaudeHome } from '../test/helpers/realCli/claudeCode.js';
import { CODEX_ANNOUNCEMENT, CODEX_API_KEY, codexMcp, seedCodexHome } from '../test/helpers/realCli/codexCli.js';
import { describeRealCli, squeeze } from '../test/helpers/realCli/harness.js';
import { screenText } from './pageActions.js';
import { realCliServe, type RealCliServe } from './realCliWindow.js';
import { windowOn } from './windowClient.js';
import { windowForFile } from './windowForFile.js';
import { withQuery } from './harness.js';

/**
 * Issue 47's Must-show, in the window: the real Claude Code CLI runs in a real pane of `forkbench serve`'s window
 * in Chromium, talking to the fake Anthropic API, and spends turns before its claim on T-1 (its overhead) and
 * under it. The host reads them from Claude Code's own transcript. The card, the details panel and the shipped
 * `forkbench cost T-1 --json` (typed in a shell pane of the same window) show exactly the tokens, by kind, that
 * the fake reported for the turns it answered after the claim was granted, and their money at the Thread's own
 * price for the model, in all and for the agent; the Thread's `forkbench cost --json` shows the turns before it as
 * the agent's overhead. A budget in tokens, set in the details panel, is crossed at 80 % by turn 3 and spent by
 * turn 4: the window says so after exactly those turns, and the pane is told (Claude Code gets the host's words
 * as its next message and answers them).
 * Then the same figures for the real Codex CLI against the fake Responses API, read from its rollout.
 */

/** A board tool's name as Claude Code exposes it. */
const claudeMcp = (tool: string) => `mcp__${MCP_SERVER_NAME}__${tool}`;

const HELLO_ASK = 'Say hello before you take any work.';
const HELLO = 'Hello: no task taken yet.';
const CLAIM_ASK = 'Take task T-1 from the board.';
const stepAsk = (s: number) => `Go on with step ${s} of T-1.`;
/** What the host types into the pane once T-1's budget is spent (budgetWatch.ts): the script answers it. */
const TOLD = 'has spent its budget';

/** The model's answers under the claim, in order: the one after the claim's result, steps 2 to 4 as the person
 *  asks for each, and its answer to the host's stop. Each reports the usage usageUnderClaim gives it. */
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

/** Which of the test's messages a conversation answers: the one said last in `said`, its text (a CLI adds its own
 *  reminders around a person's words, so a message is found by its text, not its place). */
function lastSaid(said: string): string {
  const phrases = [HELLO_ASK, CLAIM_ASK, ...[2, 3, 4].map(stepAsk), TOLD];
  return phrases.reduce((best, p) => (said.lastIndexOf(p) > said.lastIndexOf(best) ? p : best));
}

const claudeScript: Script = {
  // The agent's conversation carries the board instructions the profile appends to the system prompt.
  isAgent: (body) => JSON.stringify(body.system ?? '').includes('Forkbench') && (body.tools ?? []).some((t) => t.name === 'Bash'),
  next(c): Turn {
    const asked = lastSaid(JSON.stringify(c.body.messages));
    if (asked === HELLO_ASK) return { text: HELLO };
    if (asked === TOLD) return { text: UNDER_CLAIM[4] };
    const step = [2, 3, 4].find((s) => asked === stepAsk(s));
    if (step) return { text: UNDER_CLAIM[step - 1]! };
    const claim = c.calls.find((call) => call.name === claudeMcp('claim'));
    if (claim) return claim.isError ? { text: `The claim failed: ${claim.result}` } : { text: UNDER_CLAIM[0] };
    // Claude Code defers MCP tools: the names are listed to the model, the schemas fetched with ToolSearch.
    const offered = c.body.tools?.find((t) => t.name === claudeMcp('claim'));
    if ((!offered || offered.defer_loading) && !c.calls.some((call) => call.name === 'ToolSearch') && c.tools.includes('ToolSearch')) {
      return { tool: 'ToolSearch', input: { query: `select:${claudeMcp('claim')}` } };
    }
    return { tool: claudeMcp('claim'), input: { taskId: 'T-1' } };
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
/**
 * The Thread's own price for Claude's models, set in its settings as a person does for a model the bundled table
 * (dated) does not know, as it does not know the one Claude Code 2.1.332 names: $2 input, $10 output, $1 cache
 * read and $3 cache write per million tokens. Whole dollars, so each turn's money is whole micro-dollars.
 */
const CLAUDE_PRICES = { input: 2, output: 10, cacheRead: 1, cacheWrite: 3 };
/** What a turn of `t` costs at CLAUDE_PRICES, in micro-dollars ($ per million × tokens). */
const microsOf = (t: TokenCounts) => t.input * CLAUDE_PRICES.input + t.output * CLAUDE_PRICES.output + t.cacheRead * CLAUDE_PRICES.cacheRead + t.cacheWrite * CLAUDE_PRICES.cacheWrite;
const usdOf = (ts: readonly TokenCounts[]) => ts.reduce((n, t) => n + microsOf(t), 0) / 1_000_000;
/** Billed tokens of the first `n` turns under the claim, as the fake fixes them. */
const spentAfter = (n: number) => Array.from({ length: n }, (_, i) => billed(kindsOf(usageUnderClaim(i + 1)))).reduce((a, b) => a + b, 0);
const en = (n: number) => n.toLocaleString('en');

/** The fake's replies to the agent, as far as the tests read them: when it answered, and what it reported. */
interface Reply<U> {
  at: number;
  usage: U;
}

/** The lines at the foot of a TUI's screen that hold its prompt: Codex's composer (the prompt, wrapped once at
 *  most) with the popup of slash commands that match what is typed (a few) or its two footer lines below it. */
const PROMPT_LINES = 10;

/**
 * What the tests do in the served window with an agent's pane, as a person does: `tell` says, when a wait fails,
 * what else there is to know (the fake's requests, the proxy trap).
 */
function windowHands(win: ReturnType<typeof windowForFile>, tell: () => string) {
  const page = (): Page => win.page;
  /** What the pane's terminal in the window shows, scrollback included. */
  const screen = (agent: string) => screenText(page(), agent);
  const failed = async (agent: string, what: string, err: unknown) =>
    new Error(`${what}: ${(err as Error).message}\n${tell()}\n--- screen ---\n${(await screen(agent)).split('\n').slice(-40).join('\n')}`);
  /** Waits until the pane's screen passes `ok`; a failure tells the screen. */
  const until = async (agent: string, ok: (text: string) => boolean, what: string, timeout: number) => {
    try {
      await expect.poll(async () => ok(await screen(agent)), { timeout }).toBe(true);
    } catch (err) {
      throw await failed(agent, `never ${what}`, err);
    }
  };
  /** Waits until the pane shows `text`, however the TUI wrapped it. */
  const shows = (agent: string, text: string, timeout: number) => until(agent, (s) => squeeze(s).includes(squeeze(text)), `showed "${text}"`, timeout);
  const focus = async (agent: string) => {
    await page().getByTestId(`agent-tab-${agent}`).click();
    await page().getByTestId(`terminal-${agent}`).click();
  };
  return {
    screen,
    until,
    shows,
    /**
     * Says `text` to the agent's CLI: types it into the pane's terminal, and presses Enter once the prompt shows
     * it (typed in one go with the Enter, a TUI can take the keys for a paste, in which an Enter is a new line
     * rather than "send"). `echoed`, for a text said before: the prompt's line as it shows it, looked for in the
     * screen's last PROMPT_LINES lines only (the earlier one is still in the history above).
     */
    async say(agent: string, text: string, echoed?: RegExp) {
      await focus(agent);
      await page().keyboard.type(text);
      if (echoed) await until(agent, (s) => echoed.test(s.split('\n').slice(-PROMPT_LINES).join('\n')), `showed "${text}" in its prompt`, 10_000);
      else await shows(agent, text, 10_000);
      await page().keyboard.press('Enter');
    },
    /** Launches an agent through `profile` from the window's door; its id once its tab says it runs. */
    async launch(key: string, profile: 'claude' | 'codex' | 'shell') {
      const host = await windowOn(win.served);
      const id = (await host.call('agent.launch', { key, profile, cols: 120, rows: 40 })).id;
      host.close();
      await expect.poll(() => page().getByTestId(`agent-tab-${id}`).getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
      return id;
    },
    /** The card's reading of T-1's spend, once its figures say `turns` turns. */
    async cardAfter(turns: number) {
      const label = () => win.card('T-1').getByTestId('card-cost-T-1').getAttribute('aria-label', { timeout: 1_000 }).catch(() => null);
      // Read within a poll or two of the turn (UsageWatch.pollMs: 3 s), on a busy machine.
      await expect.poll(async () => /tokens in (\d+) turns?/.exec((await label()) ?? '')?.[1], { timeout: 20_000 }).toBe(String(turns));
      return (await label())!;
    },
    /** The fake's replies to the agent, split at its grant of T-1: before it (overhead) and after (under the claim). */
    async aroundTheClaim<U>(key: string, agent: string, replies: ReadonlyArray<Reply<U>>) {
      const w = await windowOn(win.served);
      const history = await w.call('task.history', { key, taskId: 'T-1' });
      w.close();
      const grant = history.find((e): e is Extract<BoardEvent, { kind: 'grant' }> => e.kind === 'grant' && e.agentId === agent);
      expect(grant).toBeDefined();
      return { before: replies.filter((r) => r.at < grant!.at), under: replies.filter((r) => r.at > grant!.at) };
    },
    /** T-1's details panel, open while `read` reads it. */
    async inDetails(read: (details: ReturnType<Page['getByTestId']>) => Promise<void>) {
      await win.card('T-1').focus();
      await page().keyboard.press('Enter');
      const details = page().getByTestId('task-details');
      await details.waitFor();
      await read(details);
      await page().keyboard.press('Escape');
      await details.waitFor({ state: 'detached' });
    },
    /**
     * What `forkbench cost ARGS` prints, typed in the shell pane `shell` and read off its screen: base64 between
     * two marks (quoted apart in the command, so its echo is not taken for them), so the terminal's wrapping
     * cannot cut a string, and the JSON parsed.
     */
    async costJson<T>(shell: string, args: string, mark: string): Promise<T> {
      await focus(shell);
      await page().keyboard.type(`echo "${mark}""-BEGIN"; forkbench cost ${args} | base64 -w0; echo; echo "${mark}""-END"`);
      await page().keyboard.press('Enter');
      const framed = new RegExp(`\\n${mark}-BEGIN\\n([A-Za-z0-9+/=\\n]*)\\n${mark}-END`);
      await until(shell, (s) => framed.test(s), `printed ${mark}`, 15_000);
      const b64 = framed.exec(await screen(shell))![1]!.replace(/\n/g, '');
      return (JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as { result: T }).result;
    },
  };
}

/** The figures of the details panel's cost section: the summary line, the tokens by kind and the agent's row. */
async function detailsFigures(cost: ReturnType<Page['getByTestId']>, agent: string) {
  const kinds = Object.fromEntries(await Promise.all((['input', 'cacheRead', 'cacheWrite', 'output', 'reasoning'] as const).map(async (k) => [k, await cost.getByTestId(`details-cost-${k}`).textContent()])));
  return {
    turns: await cost.getByTestId('details-cost-turns').textContent(),
    kinds,
    agentTokens: await cost.getByTestId(`details-cost-agent-tokens-${agent}`).textContent(),
    claims: await cost.getByTestId('details-cost-claim-count').textContent(),
  };
}

/** What the panel should show for `want` over `turns` turns. */
const figuresOf = (want: TokenCounts, turns: number) => ({
  turns: `${en(billed(want))} tokens in ${turns} turns`,
  kinds: { input: en(want.input), cacheRead: en(want.cacheRead), cacheWrite: en(want.cacheWrite), output: en(want.output), reasoning: en(want.reasoning) },
  agentTokens: en(billed(want)),
  claims: '1 claim',
});

describeRealCli('claude', 'the real Claude Code in the window: its cost per task and its budget (issue 47)', () => {
  let api: FakeAnthropic | undefined;
  let session: RealCliServe | undefined;
  // the fake server goes once no pane talks to it.
  const win = windowForFile(async () => {
    api = await startFakeAnthropic(claudeScript);
    session = await realCliServe({ env: () => claudeEnv(api!.url), seed: (home, folder) => seedClaudeHome(home, 'default', { [folder]: {} }) });
    return session.options;
  });
  // After the window and its serve: the fake server and the trap go once no pane talks to them.
  win.after(async () => {
    await session?.close();
    await api?.close();
  });
  const hands = windowHands(win, () => `--- the fake's requests ---\n${api!.summary()}\n--- proxy trap ---\n${session!.trap.attempts.join('\n')}`);
  const replies = () => api!.turns.map((p) => p.conversation.reply!);

  let claude = '';
  let name = '';
  let key = '';

  it('turns before the claim are overhead; under it the window counts each turn as it is read, and the budget’s 80% notice and stop come after exactly turns 3 and 4, the pane told', async () => {
    const { page } = win;
    await page.goto(withQuery(win.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    key = thread!.key;
    await host.call('task.add', { key, title: 'Port the parser', writeKey: 'cost-realcli-add-1' });
    host.close();
    claude = await hands.launch(key, 'claude');
    name = (await page.getByTestId(`agent-tab-${claude}`).getAttribute('data-name'))!;

    // Claude's models priced in the Thread's settings before any turn: the fold prices a turn as the prices
    // stand when it is recorded.
    await page.getByTestId('thread-settings').click();
    await page.getByTestId('settings-prices').fill(`claude ${CLAUDE_PRICES.input} ${CLAUDE_PRICES.output} ${CLAUDE_PRICES.cacheRead} ${CLAUDE_PRICES.cacheWrite}`);
    await page.getByTestId('settings-prices-save').click();
    const w = await windowOn(win.served);
    await expect.poll(async () => (await w.call('thread.snapshot', { key })).board.settings.prices).toEqual({ claude: CLAUDE_PRICES });
    w.close();
    await page.getByTestId('settings-lease').press('Escape');
    await expect.poll(() => page.getByTestId('settings-prices').count()).toBe(0);

    // T-1's budget, set in its details panel before any turn: in tokens, the currency of a flat-rate plan.
    await hands.inDetails(async (details) => {
      await details.getByTestId('details-budget-unit').selectOption('tokens');
      await details.getByTestId('details-budget-amount').fill(String(BUDGET));
      await details.getByTestId('details-budget-amount').press('Enter');
      const w = await windowOn(win.served);
      await expect.poll(async () => (await w.call('cost.task', { key, taskId: 'T-1' })).budget?.budget).toEqual({ unit: 'tokens', limit: BUDGET });
      w.close();
    });

    // Claude Code's prompt box, in the window's terminal.
    await hands.until(claude, (s) => /^❯/m.test(s), 'showed the Claude Code prompt', 30_000);

    // Before the claim: the agent's own overhead, on no card.
    await hands.say(claude, HELLO_ASK);
    await hands.shows(claude, HELLO, 30_000);

    await hands.say(claude, CLAIM_ASK);
    await expect.poll(() => win.card('T-1').getAttribute('data-state'), { timeout: 30_000 }).toBe('claimed');
    await hands.shows(claude, UNDER_CLAIM[0], 30_000);
    expect(await hands.cardAfter(1)).toContain(`${en(spentAfter(1))} tokens in 1 turn`);
    const alert = page.getByTestId('budget-alert-T-1');
    expect(await alert.count()).toBe(0);
    /** The host's standing notices about budgets, as the window shows them under its header: title and body. */
    const budgetNotices = async () =>
      (await page.getByTestId('host-notice').evaluateAll((els) => els.map((e) => [e.querySelector('.toast-title')?.textContent ?? '', e.querySelector('.toast-body')?.textContent ?? '']))).filter(([title]) => title!.startsWith('Budget'));

    for (let s = 2; s <= STOP_AFTER; s++) {
      await hands.say(claude, stepAsk(s));
      await hands.shows(claude, UNDER_CLAIM[s - 1]!, 30_000);
      expect(await hands.cardAfter(s)).toContain(`${en(spentAfter(s))} tokens in ${s} turns`);
      const spent = `${en(spentAfter(s))} of ${en(BUDGET)} tokens`;
      if (s < NOTICE_AFTER) {
        expect(await alert.count(), `no budget line after turn ${s}`).toBe(0);
        expect(await budgetNotices(), `no budget notice after turn ${s}`).toEqual([]);
      } else if (s < STOP_AFTER) {
        await expect.poll(() => alert.getAttribute('data-level', { timeout: 1_000 }).catch(() => null), { timeout: 5_000 }).toBe('notice');
        expect(await alert.getByTestId('budget-alert-T-1-text').textContent()).toBe(`T-1 has spent ${spent}: past 80% of its budget.`);
        // The person is told once, by the host's notice (budgetWatch.ts), as the window shows it.
        await expect.poll(budgetNotices, { timeout: 5_000 }).toEqual([['Budget 80% spent: T-1', `T-1 "Port the parser" has spent ${spent} of its budget.`]]);
      } else {
        await expect.poll(() => alert.getAttribute('data-level', { timeout: 1_000 }).catch(() => null), { timeout: 5_000 }).toBe('stop');
        expect(await alert.getByTestId('budget-alert-T-1-text').textContent()).toBe(`T-1 reached its budget: ${spent}. It is not dispatched again, and its agent was told.`);
        // The spent notice replaces the 80% one.
        await expect.poll(async () => (await budgetNotices()).map(([title]) => title), { timeout: 5_000 }).toEqual(['Budget spent: T-1']);
      }
    }
    await win.shot('cost-realcli-01-budget-reached');

    // The pane is told: the host types its words into Claude Code's prompt, the model gets them as the next
    // message, and its answer (a turn under the claim too) is the fifth.
    const told = `T-1 "Port the parser" has spent its budget (${en(spentAfter(STOP_AFTER))} of ${en(BUDGET)} tokens). Stop working on T-1 now and wait`;
    await hands.shows(claude, told, 30_000);
    await hands.shows(claude, UNDER_CLAIM[4], 30_000);
    const answered = api!.turns.find((p) => 'text' in p.turn && p.turn.text === UNDER_CLAIM[4]);
    expect(JSON.stringify(answered?.conversation.body.messages.at(-1))).toContain(told.replace(/"/g, '\\"'));
    expect(await hands.cardAfter(5)).toContain(`${en(spentAfter(5))} tokens in 5 turns`);
    expect(await alert.getAttribute('data-level')).toBe('stop');
    expect(session!.trap.attempts).toEqual([]);
  }, 240_000);

  it('the details panel shows exactly the tokens by kind the fake reported for the turns under the claim, and their money, in all and for the agent', async () => {
    const { under } = await hands.aroundTheClaim(key, claude, replies());
    // The turns the fake answered after the grant are the five answers under the claim, each with its usage.
    expect(under.map((r) => r.usage)).toEqual([1, 2, 3, 4, 5].map(usageUnderClaim));
    const want = sumKinds(under.map((r) => kindsOf(r.usage)));
    // 7,400 + 16s micro-dollars for turn s: 37,240 for the five, $0.03724, shown to four places.
    expect(usdOf(under.map((r) => kindsOf(r.usage)))).toBe(0.03724);
    await hands.inDetails(async (details) => {
      const cost = details.getByTestId('details-cost');
      expect(await detailsFigures(cost, claude)).toEqual(figuresOf(want, 5));
      expect(await cost.getByTestId('details-cost-spent').textContent()).toBe('$0.0372');
      expect(await cost.getByTestId(`details-cost-agent-spent-${claude}`).textContent()).toBe('$0.0372');
      expect(await cost.getByTestId(`details-cost-agent-${claude}`).locator('th').textContent()).toBe(name);
      await win.shot('cost-realcli-02-details');
    });
  }, 60_000);

  it('`forkbench cost T-1 --json`, typed in a shell pane of the window, gives the same figures, per agent too; `forkbench cost --json` the turns before the claim as the agent’s overhead', async () => {
    const { before, under } = await hands.aroundTheClaim(key, claude, replies());
    const want = sumKinds(under.map((r) => kindsOf(r.usage)));
    const overhead = sumKinds(before.map((r) => kindsOf(r.usage)));
    // The hello and the turns that led to the claim (a ToolSearch where Claude Code defers the board's tools).
    expect(before.length).toBeGreaterThanOrEqual(2);

    const shell = await hands.launch(key, 'shell');
    const usd = usdOf(under.map((r) => kindsOf(r.usage)));
    const overheadUsd = usdOf(before.map((r) => kindsOf(r.usage)));
    const { task } = await hands.costJson<{ task: TaskCostView }>(shell, 'T-1 --json', 'TASKCOST');
    expect(task).toMatchObject({ taskId: 'T-1', state: 'claimed', tokens: want, usd, unpriced: 0, turns: 5, claims: 1, budget: { budget: { unit: 'tokens', limit: BUDGET } } });
    expect(task.byAgent).toEqual([expect.objectContaining({ agentId: claude, tokens: want, usd, turns: 5, lastActed: 0 })]);
    const { thread } = await hands.costJson<{ thread: ThreadCostView }>(shell, '--json', 'THREADCOST');
    expect(thread.agents.find((a) => a.key === claude)).toMatchObject({
      label: 'claude',
      tokens: sumKinds([want, overhead]),
      usd: usdOf([...under, ...before].map((r) => kindsOf(r.usage))),
      turns: 5 + before.length,
      overhead: { tokens: overhead, usd: overheadUsd, turns: before.length },
    });
    expect(thread.tasks.map((r) => [r.key, r.tokens])).toEqual([['T-1', want]]);
    await win.shot('cost-realcli-03-cli');
  }, 60_000);
});

/** Codex's scripted model: the same work as Claude's, without the budget: hello, the claim and one step more. */
const codexScript = {
  // The agent's conversation carries the board instructions the profile adds as developer instructions.
  isAgent: (c: ResponsesConversation) => c.text.includes('Forkbench') && c.tools.includes('exec_command'),
  next(c: ResponsesConversation): ResponsesTurn {
    const asked = lastSaid(c.text);
    if (asked === HELLO_ASK) return { text: HELLO };
    if (asked === stepAsk(2)) return { text: UNDER_CLAIM[1] };
    const claim = c.calls.find((call) => call.name === codexMcp('claim') && call.answered);
    if (claim) return /"token":\s*\d+/.test(claim.output) ? { text: UNDER_CLAIM[0] } : { text: `The claim failed: ${claim.output}` };
    return { tool: codexMcp('claim'), input: { taskId: 'T-1' } };
  },
};

/** A Responses API usage as Codex's rollout records it and the board counts it: cached input read apart from the
 *  rest of the input; reasoning inside the output (prices.ts). */
const codexKindsOf = (u: ResponsesUsage): TokenCounts => ({
  input: u.input_tokens - u.input_tokens_details.cached_tokens,
  output: u.output_tokens,
  cacheRead: u.input_tokens_details.cached_tokens,
  cacheWrite: 0,
  reasoning: u.output_tokens_details.reasoning_tokens,
});

/** How long an answer to /mcp is waited for before asking again, and how often it is asked: a minute in all, for
 *  a server that starts in a second or two on a quiet machine. */
const MCP_ANSWER_MS = 5_000;
const MCP_ASKS = 12;

describeRealCli('codex', 'the real Codex CLI in the window: its cost per task (issue 47)', () => {
  let api: FakeResponses | undefined;
  let session: RealCliServe | undefined;
  const win = windowForFile(async () => {
    api = await startFakeResponses(codexScript);
    session = await realCliServe({
      env: (home) => ({ OPENAI_API_KEY: CODEX_API_KEY, CODEX_HOME: join(home, '.codex') }),
      seed: (home, folder) => seedCodexHome(join(home, '.codex'), fs.realpathSync(folder), api!.url),
    });
    return session.options;
  });
  win.after(async () => {
    await session?.close();
    await api?.close();
  });
  const hands = windowHands(win, () => `--- the fake's requests ---\n${api!.summary()}\n--- proxy trap ---\n${session!.trap.attempts.join('\n')}`);
  const replies = () => api!.turns.map((p) => p.conversation.reply!);

  it('its turns under the claim, read from its rollout, show exactly in the details panel and in `forkbench cost T-1 --json`; those before it as its overhead', async () => {
    const { page } = win;
    await page.goto(withQuery(win.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    const key = thread!.key;
    await host.call('task.add', { key, title: 'Port the parser', writeKey: 'cost-realcli-codex-add-1' });
    host.close();
    const codex = await hands.launch(key, 'codex');

    // Codex starts the board's MCP server beside its first turn rather than before it: a turn sent too early
    // reaches the model without the board's tools. So, as a person would, /mcp until it says connected.
    await hands.until(codex, (s) => /Ask Codex to do anything/.test(s), 'showed the Codex composer', 30_000);
    // Each answer is the servers' state as it was asked; Codex redraws its history on a resize (the window fits
    // the pane to its terminal), so answers are not counted, only the last one read.
    const lastStatus = (screen: string) => [...screen.matchAll(/• forkbench: (\S+) \(\d+ tools?\)/g)].at(-1)?.[1];
    for (let asked = 1; lastStatus(await hands.screen(codex)) !== 'connected'; asked++) {
      await hands.say(codex, '/mcp', /› \/mcp\s*$/m);
      try {
        // An answer comes within a second or two; a server still starting says so, and is asked again.
        await hands.until(codex, (screen) => lastStatus(screen) === 'connected', "showed the board's server connected", MCP_ANSWER_MS);
      } catch (err) {
        if (asked === MCP_ASKS) throw err;
      }
    }

    await hands.say(codex, HELLO_ASK);
    await hands.shows(codex, HELLO, 30_000);
    await hands.say(codex, CLAIM_ASK);
    await expect.poll(() => win.card('T-1').getAttribute('data-state'), { timeout: 30_000 }).toBe('claimed');
    await hands.shows(codex, UNDER_CLAIM[0], 30_000);
    await hands.say(codex, stepAsk(2));
    await hands.shows(codex, UNDER_CLAIM[1], 30_000);
    await hands.cardAfter(2);

    const { before, under } = await hands.aroundTheClaim(key, codex, replies());
    // The hello and the claim's call before the grant; after it, the answer to the claim and step 2.
    expect([before.length, under.length]).toEqual([2, 2]);
    const want = sumKinds(under.map((r) => codexKindsOf(r.usage)));
    const overhead = sumKinds(before.map((r) => codexKindsOf(r.usage)));
    expect(want.reasoning).toBeGreaterThan(0);
    await hands.inDetails(async (details) => {
      expect(await detailsFigures(details.getByTestId('details-cost'), codex)).toEqual(figuresOf(want, 2));
      await win.shot('cost-realcli-04-codex-details');
    });

    const shell = await hands.launch(key, 'shell');
    const { task } = await hands.costJson<{ task: TaskCostView }>(shell, 'T-1 --json', 'TASKCOST');
    expect(task).toMatchObject({ taskId: 'T-1', state: 'claimed', tokens: want, turns: 2, claims: 1 });
    expect(task.byAgent).toEqual([expect.objectContaining({ agentId: codex, tokens: want, turns: 2, lastActed: 0 })]);
    const { thread: threadCost } = await hands.costJson<{ thread: ThreadCostView }>(shell, '--json', 'THREADCOST');
    expect(threadCost.agents.find((a) => a.key === codex)).toMatchObject({ label: 'codex', tokens: sumKinds([want, overhead]), turns: 4, overhead: { tokens: overhead, turns: 2 } });
    expect(session!.trap.attempts.filter((a) => !CODEX_ANNOUNCEMENT.test(a))).toEqual([]);
  }, 240_000);
});
