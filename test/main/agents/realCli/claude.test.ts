/**
 * The real Claude Code CLI, launched through its real profile in a real pty by a live ThreadHost, talking to
 * a fake Anthropic API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and renew it
 * with the claim's token, run `forkbench board` through the CLI's own Bash tool, then answer and stop.
 *
 * What this proves about the profile: the board's MCP server starts and its tools reach the board under the
 * agent's identity, and neither the MCP tools nor `forkbench` in Bash stop at an approval dialog (a waiting
 * dialog would let the lease lapse, and here would keep the renew from ever arriving).
 */
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { MCP_SERVER_NAME } from '../../../../src-main/agents/profiles.js';
import { AGENT_METHODS } from '../../../../src-shared/protocol/agentMethods.js';
import { settledArgv, ASK, boardWork, closedAfterEach, describeRealCli, killPane, NOTE, openRealCliThread, recordStates, squeeze, untilSaved, type Pane, type RealCliThread, type StateSeen } from '../../../helpers/realCli/harness.js';
import { claudeEnv, seedClaudeHome, type ClaudePermissionMode } from '../../../helpers/realCli/claudeCode.js';
import { startFakeAnthropic, type Script, type Turn } from '../../../helpers/realCli/fakeAnthropic.js';
import { ClaudeUsageReader } from '../../../../src-main/usage/claudeUsage.js';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { waitFor } from '../../../helpers/pty.js';

const FINAL = 'T-1 is claimed, noted and renewed; the board lists it.';

/** A board tool's name as Claude Code exposes it. */
const mcp = (tool: string) => `mcp__${MCP_SERVER_NAME}__${tool}`;

/** The scripted model: each step follows from the tool results the CLI has sent back so far. */
const boardScript: Script = {
  // The agent's conversation carries the board instructions the profile appends to the system prompt.
  isAgent: (body) => JSON.stringify(body.system ?? '').includes('Forkbench') && (body.tools ?? []).some((t) => t.name === 'Bash'),
  next(c) {
    const called = (name: string) => c.calls.find((call) => call.name === name);
    const claim = called(mcp('claim'));
    if (!claim) {
      // Claude Code defers MCP tools: the names are listed to the model, the schemas fetched with ToolSearch.
      const offered = c.body.tools?.find((t) => t.name === mcp('claim'));
      if ((!offered || offered.defer_loading) && !called('ToolSearch') && c.tools.includes('ToolSearch')) {
        return { tool: 'ToolSearch', input: { query: `select:${['claim', 'note', 'renew'].map(mcp).join(',')}` } };
      }
      return { tool: mcp('claim'), input: { taskId: 'T-1' } };
    }
    const token = Number(/"token":\s*(\d+)/.exec(claim.result)?.[1]);
    if (claim.isError || !token) return { text: `The claim failed: ${claim.result}` };
    if (!called(mcp('note'))) return { tool: mcp('note'), input: { taskId: 'T-1', text: NOTE, token } };
    if (!called(mcp('renew'))) return { tool: mcp('renew'), input: { taskId: 'T-1', token } };
    if (!called('Bash')) return { tool: 'Bash', input: { command: 'forkbench board', description: 'Show the task board' } };
    return { text: FINAL };
  },
};

const REMEMBER = 'Remember this code word for later: KIWI-7031.';
const NOTED = 'Noted: the code word is safe with me.';
const RECALL = 'Which code word did I give you?';
const RECALLED = 'You gave me the code word from before.';

/** A model with no board work: it answers the first message, and the question about it once asked. */
const memoryScript: Script = {
  isAgent: boardScript.isAgent,
  next: (c) => ({ text: JSON.stringify(c.body.messages).includes(RECALL) ? RECALLED : NOTED }),
};

const PERMISSION_FILE = 'permitted.txt';
const PERMISSION_ASK = 'Create the file permitted.txt with touch.';
const PERMISSION_FINAL = 'permitted.txt is there now.';
/** A turn that needs a person: a Bash command no rule allows, so manual mode asks; then the final answer. */
const permissionScript: Script = {
  isAgent: boardScript.isAgent,
  next(c) {
    if (!c.calls.find((call) => call.name === 'Bash')) return { tool: 'Bash', input: { command: `touch ${PERMISSION_FILE}`, description: 'Create the file' } };
    return { text: PERMISSION_FINAL };
  },
};

/**
 * Claude Code 2.1.332 drops keys that come within 150 ms of a dialog's first paint (its dialogs' input grace,
 * so that a keystroke meant for the prompt cannot approve a dialog that appeared under it): here an Enter
 * sent as the dialog showed was lost in 4 runs of 4, one sent 150 ms after the hook's report was taken.
 * Counted from when the test's screen showed the dialog, which is after the paint, with room for the CLI's
 * own clock read after it: a CLI's timer, not a wait for output. A person takes longer to read the dialog.
 */
const CLAUDE_DIALOG_GRACE_MS = 400;

/** Phrases of Claude Code's approval dialogs (as 2.1.332 words them); none may show in a run. */
const APPROVAL_DIALOG = ['Do you want to proceed?', "don't ask again", 'always allow', 'Do you want to use this API key?', 'Is this a project you created or one you trust?'];

/** Every approval-dialog phrase the pane ever printed or showed. */
function approvalDialogs(t: RealCliThread, pane: Pane): string[] {
  const printed = squeeze(t.output(pane.agent.id));
  const shown = squeeze(pane.screen.seen());
  return APPROVAL_DIALOG.filter((p) => printed.includes(squeeze(p)) || shown.includes(squeeze(p)));
}

/** The prompt box is up and takes typing: its line starts with the prompt mark. */
const ready = (pane: Pane) => pane.step(pane.screen.until(() => /^❯/m.test(pane.screen.visible()), 30_000, 'the Claude Code prompt'));

describeRealCli('claude', 'Claude Code, the real CLI through its profile', () => {
  const open = closedAfterEach();

  it('killed and resumed through its profile: the same agent on the same conversation, which the model gets back in full', async () => {
    const api = open(await startFakeAnthropic(memoryScript));
    const t = open(await openRealCliThread('claude', claudeEnv(api.url)));
    seedClaudeHome(t.home, 'default', { [t.folder]: {} });
    const first = await t.launch('claude', { diagnose: api.summary });
    await ready(first);
    await first.step(first.screen.type(REMEMBER));
    await first.step(first.screen.shows(NOTED, 15_000, 'the answer to the first message'));
    // The profile named the conversation at launch: its id is on the command line.
    const argv = await settledArgv(first.agent.pid!);
    const sessionId = argv[argv.indexOf('--session-id') + 1]!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // Claude Code keeps the conversation as ~/.claude/projects/<folder>/<session id>.jsonl, by that very id.
    await untilSaved(join(t.home, '.claude', 'projects'), new RegExp(`${sessionId}\\.jsonl$`), NOTED, 10_000);
    await killPane(t, first);
    const before = api.turns.length;

    const resumed = await t.resume(first.agent.id, { diagnose: api.summary });
    expect(resumed.agent).toMatchObject({ id: first.agent.id, name: first.agent.name, status: 'running' });
    expect(resumed.agent.pid).not.toBe(first.agent.pid);
    const resumedArgv = await settledArgv(resumed.agent.pid!);
    expect(resumedArgv.slice(resumedArgv.indexOf('--resume'), resumedArgv.indexOf('--resume') + 2)).toEqual(['--resume', sessionId]);
    expect(resumedArgv).not.toContain('--session-id');
    await ready(resumed);
    await resumed.step(resumed.screen.type(RECALL));
    await resumed.step(resumed.screen.shows(RECALLED, 15_000, 'the answer after the resume'));

    // The resumed agent's first request to the model carries the earlier exchange, then the new message.
    const after = api.turns.slice(before);
    expect(after.length, api.summary()).toBeGreaterThan(0);
    const said = after[0]!.conversation.body.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => b.text ?? '').join(''))).join('\n');
    expect(said).toContain(REMEMBER);
    expect(said).toContain(NOTED);
    expect(said.indexOf(REMEMBER)).toBeLessThan(said.indexOf(RECALL));
    expect(t.trap.attempts).toEqual([]);
  }, 90_000);

  it.each<ClaudePermissionMode>(['default', 'auto'])(
    'in %s permission mode: claims, notes and renews over MCP and lists the board with Bash, with no approval prompt',
    async (mode) => {
      const api = open(await startFakeAnthropic(boardScript));
      const t = open(await openRealCliThread('claude', claudeEnv(api.url)));
      seedClaudeHome(t.home, mode, { [t.folder]: {} });
      const pane = await t.launch('claude', { diagnose: api.summary });
      const { agent, screen, step } = pane;

      await ready(pane);
      await step(screen.type(ASK));
      await boardWork(t, pane);
      await step(screen.shows(FINAL, 15_000, 'the final answer'));

      // What the CLI sent back for each call, as the model saw it in the last request.
      const last = api.turns.at(-1);
      expect(last?.turn, api.summary()).toEqual({ text: FINAL });
      const result = (name: string) => last!.conversation.calls.find((c) => c.name === name);
      for (const tool of ['claim', 'note', 'renew']) expect(result(mcp(tool))?.isError, `${tool}: ${result(mcp(tool))?.result}`).toBe(false);
      const bash = result('Bash');
      expect(bash?.isError, bash?.result).toBe(false);
      expect(bash?.result).toMatch(/^T-1\s+claimed\s+write hello\.txt\b/m);
      expect(bash?.result).toContain(agent.id);

      expect(approvalDialogs(t, pane)).toEqual([]);
      expect(t.trap.attempts).toEqual([]);
    },
    60_000,
  );

  it('its state from its own hooks: a permission prompt is needs-input within 1 s (source hook), the answer working, the final answer idle', async () => {
    const api = open(await startFakeAnthropic(permissionScript));
    const t = open(await openRealCliThread('claude', claudeEnv(api.url)));
    seedClaudeHome(t.home, 'default', { [t.folder]: {} });
    const states = recordStates(t);
    const pane = await t.launch('claude', { diagnose: () => `${api.summary()}\nstates:\n${states.summary()}` });
    const { agent, screen, step } = pane;
    const mine = (state: string, source?: string, after = 0) => (s: StateSeen) => s.e.agentId === agent.id && s.e.state === state && (!source || s.e.source === source) && s.e.seq > after;
    await ready(pane);
    await step(screen.type(PERMISSION_ASK));
    await step(screen.until(() => /Do you want to proceed\?/.test(screen.visible()), 30_000, 'the permission dialog'));
    const shownAt = performance.now();
    // The screen matcher may see the dialog first; the PermissionRequest hook (a node process to start) then
    // names the tool and command, as the stronger source.
    const waiting = await step(states.until(mine('needs-input', 'hook'), 5_000, 'needs-input from the hook'));
    expect(waiting.at - shownAt).toBeLessThan(1000);
    expect(waiting.e).toMatchObject({ source: 'hook', text: expect.stringContaining(`touch ${PERMISSION_FILE}`) });
    expect(t.host.roster.agents().find((a) => a.id === agent.id)?.state).toMatchObject({ state: 'needs-input', source: 'hook' });
    // The person answers Yes in the pane, as a person does: not within Claude Code's input grace, in which the
    // dialog drops keys (a keystroke typed ahead must not approve a dialog that just appeared). Sent at once,
    // the Enter was lost, the dialog stayed, and only the CLI's later Notification said so.
    const graceLeft = shownAt + CLAUDE_DIALOG_GRACE_MS - performance.now();
    if (graceLeft > 0) await new Promise((r) => setTimeout(r, graceLeft));
    t.host.roster.relay.input(agent.id, '\r');
    await step(states.until(mine('working', undefined, waiting.e.seq), 10_000, 'working after the answer'));
    await step(screen.shows(PERMISSION_FINAL, 30_000, 'the final answer'));
    await step(states.until(mine('idle', undefined, waiting.e.seq), 10_000, 'idle after the final answer'));
    expect(fs.existsSync(join(t.folder, PERMISSION_FILE))).toBe(true);
    const after = states.all.filter((s) => s.e.agentId === agent.id && s.e.seq > waiting.e.seq).map((s) => `${s.e.state}/${s.e.source}`);
    expect(after.at(-1)).toBe('idle/hook');
    expect(after).toContain('working/terminal');
    // The dialog was answered once: no second wait after the answer.
    expect(after).not.toContain('needs-input/hook');
    expect(t.trap.attempts).toEqual([]);
  }, 90_000);

  it("Claude Code's own MCP listings show the profile's forkbench server connected", async () => {
    const api = open(await startFakeAnthropic(boardScript));
    const t = open(await openRealCliThread('claude', claudeEnv(api.url)));
    // `claude mcp list` takes no --mcp-config: it lists the user's, the local and the project's (.mcp.json)
    // servers. So it runs in a folder of the test's own (never the repo) holding a copy of the file the profile
    // generated as its .mcp.json, a folder the seeded home trusts and whose project servers it has approved.
    const listing = join(dirname(t.folder), 'mcp-list');
    fs.mkdirSync(listing);
    seedClaudeHome(t.home, 'default', { [t.folder]: {}, [listing]: { enabledMcpjsonServers: [MCP_SERVER_NAME] } });
    const pane = await t.launch('claude', { diagnose: api.summary });
    const { screen, step } = pane;
    await ready(pane);

    // The running session's own view (`/mcp`) of the servers it got through the profile's --mcp-config.
    await step(screen.type('/mcp'));
    await step(screen.until(() => new RegExp(`✔ ${MCP_SERVER_NAME}\\s+\\d+ tools`).test(screen.visible()), 20_000, 'the board server connected in /mcp'));
    expect(screen.visible()).toMatch(new RegExp(`✔ ${MCP_SERVER_NAME}\\s+${AGENT_METHODS.filter((m) => !m.git).length} tools`));

    // The same file, checked by `claude mcp list`. The profile writes it to the agent's folder, which the
    // harness keeps under the test's temporary folder.
    const temp = dirname(t.folder);
    // Not through the agent's home: Claude makes and removes its `.claude.json.lock` there while it runs, and
    // a folder that goes mid-walk fails the walk.
    const configs = fs
      .readdirSync(temp)
      .filter((d) => join(temp, d) !== t.home && fs.statSync(join(temp, d)).isDirectory())
      .flatMap((d) => fs.readdirSync(join(temp, d), { recursive: true, encoding: 'utf8' }).map((f) => join(d, f)))
      .filter((f) => basename(f) === 'claude-mcp.json');
    expect(configs).toHaveLength(1);
    fs.copyFileSync(join(temp, configs[0]!), join(listing, '.mcp.json'));
    const list = await t.run('claude', ['mcp', 'list'], { cwd: listing });
    expect(list.code, list.out).toBe(0);
    expect(list.out).toMatch(new RegExp(`^${MCP_SERVER_NAME}: .* mcp - ✔ Connected$`, 'm'));
    expect(t.trap.attempts).toEqual([]);
  }, 60_000);
});

const B_ASK = 'Add a progress note to T-1 (it is yours now).';
const B_NOTE = 'Picked up T-1 from the first agent.';
const B_FINAL = 'Noted on T-1.';
const AFTER_ASK = 'Anything else on your side?';
const AFTER_FINAL = 'Nothing else: T-1 went to another agent.';

/** Which agent a conversation is: the board instructions name it in the system prompt. */
const agentOf = (body: { system?: unknown }): string | null => /You are agent \\?"([a-z]+-\d+-[0-9a-f]{12})/.exec(JSON.stringify(body.system ?? ''))?.[1] ?? null;

/** Two agents on one fake: the first claims T-1, notes, answers; asked again after T-1 went away, it only
 *  answers. The second, once it holds T-1, notes on it. */
const usageScript: Script = {
  isAgent: boardScript.isAgent,
  next(c) {
    const said = JSON.stringify(c.body.messages);
    const called = (name: string) => c.calls.find((call) => call.name === name);
    const fetchTools = (): Turn | null => {
      const offered = c.body.tools?.find((t) => t.name === mcp('note'));
      return (!offered || offered.defer_loading) && !called('ToolSearch') && c.tools.includes('ToolSearch') ? { tool: 'ToolSearch', input: { query: `select:${['claim', 'note'].map(mcp).join(',')}` } } : null;
    };
    if (said.includes(B_ASK)) return called(mcp('note')) ? { text: B_FINAL } : (fetchTools() ?? { tool: mcp('note'), input: { taskId: 'T-1', text: B_NOTE } });
    if (said.includes(AFTER_ASK)) return { text: AFTER_FINAL };
    const claim = called(mcp('claim'));
    if (!claim) return fetchTools() ?? { tool: mcp('claim'), input: { taskId: 'T-1' } };
    const token = Number(/"token":\s*(\d+)/.exec(claim.result)?.[1]);
    if (!called(mcp('note'))) return { tool: mcp('note'), input: { taskId: 'T-1', text: NOTE, token } };
    return { text: FINAL };
  },
};

describeRealCli('claude', "Claude Code's usage, read from its own transcript (issue 47)", () => {
  const open = closedAfterEach();

  it("a task's tokens are exactly what the API reported for the turns made under its claim, across a reassign; a re-read counts nothing twice", async () => {
    const api = open(await startFakeAnthropic(usageScript));
    const t = open(await openRealCliThread('claude-usage', claudeEnv(api.url)));
    seedClaudeHome(t.home, 'default', { [t.folder]: {} });
    const a = await t.launch('claude', { diagnose: api.summary });
    const b = await t.launch('claude', { diagnose: api.summary });
    await ready(a);
    await ready(b);
    await a.step(a.screen.type(ASK));
    await a.step(a.screen.shows(FINAL, 30_000, "A's final answer"));
    const grant = (await t.event((e) => e.kind === 'grant' && e.agentId === a.agent.id, 1000, 'the grant to A')) as Extract<BoardEvent, { kind: 'grant' }>;

    expect((await t.host.board.run((e) => e.assign('T-1', b.agent.id))).ok).toBe(true);
    const reassign = (await t.event((e) => e.kind === 'reassign', 1000, 'the reassign')) as Extract<BoardEvent, { kind: 'reassign' }>;
    await b.step(b.screen.type(B_ASK));
    await b.step(b.screen.shows(B_FINAL, 30_000, "B's final answer"));
    await a.step(a.screen.type(AFTER_ASK));
    await a.step(a.screen.shows(AFTER_FINAL, 30_000, "A's answer after the reassign"));

    // Every agent turn the fake played, by agent, with what it reported and when it replied.
    const played = api.turns.map((p) => ({ agent: agentOf(p.conversation.body), ...p.conversation.reply! }));
    expect(new Set(played.map((p) => p.agent))).toEqual(new Set([a.agent.id, b.agent.id]));
    const usageEvents = async () => (await t.host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
    // Read within a poll or two of the last turn (UsageWatch.pollMs).
    await a.step(
      waitFor(async () => {
        const ids = new Set((await usageEvents()).flatMap((e) => e.turns.map((x) => x.id)));
        return played.every((p) => ids.has(p.id));
      }, 20_000, 'every played turn recorded'),
    );
    const events = await usageEvents();
    const recorded = events.flatMap((e) => e.turns.map((x) => ({ e, x })));
    // Each turn once, with exactly the counts the API reported for it.
    expect(recorded.map((r) => r.x.id).sort()).toEqual([...new Set(recorded.map((r) => r.x.id))].sort());
    for (const { x } of recorded) {
      const p = played.find((q) => q.id === x.id);
      expect(p, `${x.id} is a turn the fake played`).toBeDefined();
      expect(x.tokens).toEqual({ input: p!.usage.input_tokens, output: p!.usage.output_tokens, cacheRead: p!.usage.cache_read_input_tokens, cacheWrite: p!.usage.cache_creation_input_tokens, reasoning: 0 });
    }
    const sum = (xs: Array<{ input: number; output: number }>) => xs.reduce((n, u) => n + u.input + u.output, 0);
    const counted = (agent: string, taskId: string | null) => sum(recorded.filter((r) => r.e.agentId === agent && r.e.taskId === taskId).map((r) => r.x.tokens));
    const reported = (agent: string, from: number, to: number) => sum(played.filter((p) => p.agent === agent && p.at > from && p.at < to).map((p) => ({ input: p.usage.input_tokens, output: p.usage.output_tokens })));
    // A's turns from its grant to the reassign are T-1's; before and after, its own overhead. B's are T-1's.
    expect(counted(a.agent.id, 'T-1')).toBe(reported(a.agent.id, grant.at, reassign.at));
    expect(counted(a.agent.id, 'T-1')).toBeGreaterThan(0);
    expect(counted(a.agent.id, null)).toBe(reported(a.agent.id, 0, grant.at) + reported(a.agent.id, reassign.at, Infinity));
    expect(counted(b.agent.id, 'T-1')).toBe(reported(b.agent.id, reassign.at, Infinity));
    expect(events.filter((e) => e.taskId === 'T-1').map((e) => [e.agentId, e.token])).toEqual(
      expect.arrayContaining([
        [a.agent.id, grant.token],
        [b.agent.id, reassign.to.token],
      ]),
    );

    // A restart reads every transcript again from its start: nothing is counted twice.
    const before = (await usageEvents()).length;
    for (const pane of [a, b]) {
      const session = (await settledArgv(pane.agent.pid!)).find((x, i, all) => all[i - 1] === '--session-id')!;
      const again = await new ClaudeUsageReader(join(t.home, '.claude'), session).read(Date.now());
      expect(again.turns.length).toBeGreaterThan(0);
      const r = await t.host.board.run((e) => e.recordUsage(pane.agent.id, 'claude', again.turns));
      expect(r.ok && r.value.recorded).toBe(0);
    }
    expect((await usageEvents()).length).toBe(before);
    expect(t.trap.attempts).toEqual([]);
  }, 120_000);
});

describeRealCli('claude', "Claude Code's usage across a host restart (issue 47)", () => {
  const open = closedAfterEach();

  it("a task's tokens are exactly what the API reported for the turns under its claim, across a host restart (the panes living on in the pty host) and a reassign after it", async () => {
    const api = open(await startFakeAnthropic(usageScript));
    const t = open(await openRealCliThread('claude-restart', claudeEnv(api.url), { ptyHost: true }));
    seedClaudeHome(t.home, 'default', { [t.folder]: {} });
    let a = await t.launch('claude', { diagnose: api.summary });
    let b = await t.launch('claude', { diagnose: api.summary });
    await ready(a);
    await ready(b);
    await a.step(a.screen.type(ASK));
    await a.step(a.screen.shows(FINAL, 30_000, "A's final answer"));
    const grant = (await t.event((e) => e.kind === 'grant' && e.agentId === a.agent.id, 1000, 'the grant to A')) as Extract<BoardEvent, { kind: 'grant' }>;
    const played = () => api.turns.map((p) => ({ agent: agentOf(p.conversation.body), ...p.conversation.reply! }));
    const usageEvents = async () => (await t.host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
    const allRecorded = (what: string) =>
      a.step(
        waitFor(async () => {
          const ids = new Set((await usageEvents()).flatMap((e) => e.turns.map((x) => x.id)));
          return played().every((p) => ids.has(p.id));
        }, 20_000, what),
      );
    // What A spent so far is on the board before the host stops, so the restart's re-read finds it all there.
    await allRecorded('the turns before the restart recorded');
    const beforeRestart = played().length;

    await t.restart();
    a = await t.reattach(a, { diagnose: api.summary });
    b = await t.reattach(b, { diagnose: api.summary });
    // The same agents, still running, A still holding T-1.
    expect(t.host.roster.agents().filter((x) => x.status === 'running').map((x) => x.id).sort()).toEqual([a.agent.id, b.agent.id].sort());
    expect(t.host.board.state.tasks.get('T-1')?.claim).toMatchObject({ agentId: a.agent.id, token: grant.token });
    await ready(a);
    await ready(b);

    expect((await t.host.board.run((e) => e.assign('T-1', b.agent.id))).ok).toBe(true);
    const reassign = (await t.event((e) => e.kind === 'reassign', 1000, 'the reassign')) as Extract<BoardEvent, { kind: 'reassign' }>;
    await b.step(b.screen.type(B_ASK));
    await b.step(b.screen.shows(B_FINAL, 30_000, "B's final answer"));
    await a.step(a.screen.type(AFTER_ASK));
    await a.step(a.screen.shows(AFTER_FINAL, 30_000, "A's answer after the reassign"));
    expect(played().length).toBeGreaterThan(beforeRestart);
    await allRecorded('every played turn recorded');

    const events = await usageEvents();
    const recorded = events.flatMap((e) => e.turns.map((x) => ({ e, x })));
    // Each turn once (the readers began again at the start of each transcript), with exactly its counts.
    expect(recorded.map((r) => r.x.id).sort()).toEqual(played().map((p) => p.id).sort());
    for (const { x } of recorded) {
      const p = played().find((q) => q.id === x.id)!;
      expect(x.tokens).toEqual({ input: p.usage.input_tokens, output: p.usage.output_tokens, cacheRead: p.usage.cache_read_input_tokens, cacheWrite: p.usage.cache_creation_input_tokens, reasoning: 0 });
    }
    const sum = (xs: Array<{ input: number; output: number }>) => xs.reduce((n, u) => n + u.input + u.output, 0);
    const counted = (agent: string, taskId: string | null) => sum(recorded.filter((r) => r.e.agentId === agent && r.e.taskId === taskId).map((r) => r.x.tokens));
    const reported = (agent: string, from: number, to: number) => sum(played().filter((p) => p.agent === agent && p.at > from && p.at < to).map((p) => ({ input: p.usage.input_tokens, output: p.usage.output_tokens })));
    expect(counted(a.agent.id, 'T-1')).toBe(reported(a.agent.id, grant.at, reassign.at));
    expect(counted(a.agent.id, 'T-1')).toBeGreaterThan(0);
    expect(counted(a.agent.id, null)).toBe(reported(a.agent.id, 0, grant.at) + reported(a.agent.id, reassign.at, Infinity));
    expect(counted(b.agent.id, 'T-1')).toBe(reported(b.agent.id, reassign.at, Infinity));
    expect(counted(b.agent.id, 'T-1')).toBeGreaterThan(0);
    // The task's cost as the board folds it: both agents' turns under its claims, each once.
    const cost = t.host.board.state.tasks.get('T-1')?.cost;
    expect(cost && cost.tokens.input + cost.tokens.output).toBe(reported(a.agent.id, grant.at, reassign.at) + reported(b.agent.id, reassign.at, Infinity));
    expect(t.trap.attempts).toEqual([]);
  }, 180_000);
});
