/**
 * The real Gemini CLI, launched through its real profile in a real pty by a live ThreadHost, talking to a
 * fake Gemini API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and renew it with
 * the claim's token, run `forkbench board` through the CLI's own shell tool, then answer and stop.
 *
 * What this proves about the profile: its Gemini home (the user's settings with the board's server merged
 * in) is the one the CLI reads, the board's MCP server starts and its tools reach the board under the
 * agent's identity, the folder needs no trust dialog, and neither the MCP tools nor `forkbench` in the shell
 * stop at an approval dialog (a waiting dialog would let the lease lapse, and here would keep the renew from
 * ever arriving). And `gemini mcp list`, run with the environment the pane got, finds the server connected.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { settledArgv, boardWork, closedAfterEach, describeRealCli, environOf, GEMINI_PASTE_GUARD_MS, killPane, NO_PROC, NOTE, openRealCliThread, plain, recordStates, untilSaved, type StateSeen } from '../../../helpers/realCli/harness.js';
import { startFakeGemini, type Conversation, type Script, type Turn, type UsageMetadata } from '../../../helpers/realCli/fakeGemini.js';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { waitFor } from '../../../helpers/pty.js';

const FINAL = 'T-1 is claimed, noted and renewed; the board lists it.';
const READY = 'Board instructions received; standing by.';

const REMEMBER = 'Remember this code word for later: KIWI-7031.';
const NOTED = 'Noted: the code word is safe with me.';
const RECALL = 'Which code word did I give you?';
const RECALLED = 'You gave me the code word from before.';

/**
 * What a person who has used Gemini CLI before has in ~/.gemini/settings.json: the API key picked as the way
 * to sign in (else the first screen asks), and usage statistics, telemetry and update checks off (else it
 * calls Google at start). The profile merges this file into the agent's own Gemini home.
 */
function seedHome(home: string): void {
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  };
  fs.mkdirSync(join(home, '.gemini'), { recursive: true });
  fs.writeFileSync(join(home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
}

/**
 * The name Gemini gives one of the board's MCP tools: `mcp_forkbench_claim` in 0.61; older releases used
 * `forkbench__claim` or the bare name.
 */
function boardTool(c: Conversation, tool: string): string | undefined {
  return c.tools.find((n) => n === `mcp_forkbench_${tool}`) ?? c.tools.find((n) => n === `forkbench__${tool}`) ?? c.tools.find((n) => n === tool);
}

/** A call's result is a failure if the CLI reported an error or the board refused it. */
const failed = (result: string) => /"error"|refused \(/.test(result);

/** The scripted model: each step follows from the tool results the CLI has sent back so far. */
function boardScript(): Script {
  return {
    next(c): Turn {
      const names = { claim: boardTool(c, 'claim'), note: boardTool(c, 'note'), renew: boardTool(c, 'renew') };
      if (!names.claim || !names.note || !names.renew) return { text: `The board's tools are missing; offered: ${c.tools.join(', ')}` };
      const called = (name: string) => c.calls.find((call) => call.name === name);
      const claim = called(names.claim);
      if (!claim) return { call: names.claim, args: { taskId: 'T-1' } };
      // The result is the MCP tool's text (the board's JSON), wrapped and escaped by the CLI.
      const token = Number(/\\?"token\\?":\s*(\d+)/.exec(claim.result)?.[1]);
      if (failed(claim.result) || !token) return { text: `The claim failed: ${claim.result}` };
      if (!called(names.note)) return { call: names.note, args: { taskId: 'T-1', text: NOTE, token } };
      if (!called(names.renew)) return { call: names.renew, args: { taskId: 'T-1', token } };
      if (!called('run_shell_command')) return { call: 'run_shell_command', args: { command: 'forkbench board', description: 'Show the task board' } };
      return { text: FINAL };
    },
  };
}

const PERMISSION_FILE = 'permitted.txt';
const PERMISSION_ASK = 'Create the file permitted.txt with touch.';
const PERMISSION_FINAL = 'permitted.txt is there now.';
/** A model that answers the instructions, then for a turn that needs a person runs a shell command no policy
 *  rule allows (Gemini asks for it), then gives the final answer. */
const permissionScript: Script = {
  next(c) {
    if (!c.text.includes(PERMISSION_ASK)) return { text: READY };
    if (!c.calls.find((call) => call.name === 'run_shell_command')) return { call: 'run_shell_command', args: { command: `touch ${PERMISSION_FILE}`, description: 'Create the file' } };
    return { text: PERMISSION_FINAL };
  },
};

/** Gemini CLI 0.61's confirmation dialog for a shell command. */
const SHELL_DIALOG = /Allow execution of/;

/** Text of Gemini CLI's approval dialogs ("Allow execution of [Shell]?", "Allow once", ...) and trust dialog. */
const APPROVAL_DIALOG = /Allow execution|Allow once|Allow for this session|Allow for all future sessions|Waiting for user confirmation|Do you trust/i;

describeRealCli('gemini', 'Gemini CLI, the real CLI through its profile', () => {
  const open = closedAfterEach();

  /** A Thread whose panes reach the fake API, and a Gemini pane on it; `script` plays the model. */
  async function launch(script: Script) {
    const api = open(await startFakeGemini(script));
    const t = open(await openRealCliThread('gemini', { GEMINI_API_KEY: 'forkbench-test-key', GOOGLE_GEMINI_BASE_URL: api.url }));
    seedHome(t.home);
    return { api, t, pane: await t.launch('gemini', { diagnose: api.summary }) };
  }

  it('claims, notes and renews over MCP and lists the board with its shell tool, with no approval prompt', async () => {
    const { api, t, pane } = await launch(boardScript());
    const { agent, screen, step } = pane;

    // The profile's first message (the board instructions, sent by --prompt-interactive) starts the script.
    await boardWork(t, pane, 45_000);
    await step(screen.shows(FINAL, 20_000, 'the final answer'));

    // What the CLI sent back for each call, as the model saw it.
    const last = api.turns.at(-1);
    expect(last?.turn, api.summary()).toEqual({ text: FINAL });
    const c = last!.conversation;
    // The board instructions reached the model as the session's first message.
    expect(api.turns[0]?.conversation.text).toContain(`You are agent "${agent.id}" in Forkbench`);
    const result = (name: string | undefined) => c.calls.find((call) => call.name === name);
    for (const tool of ['claim', 'note', 'renew']) {
      const call = result(boardTool(c, tool));
      expect(call, `${tool} was called`).toBeDefined();
      expect(failed(call!.result), `${tool}: ${call!.result}`).toBe(false);
    }
    const shell = result('run_shell_command');
    expect(shell?.args).toMatchObject({ command: 'forkbench board' });
    expect(failed(shell!.result), shell!.result).toBe(false);
    expect(shell!.result).toContain('T-1');
    expect(shell!.result).toContain('write hello.txt');
    expect(shell!.result).toContain(agent.id);

    expect(screen.seen()).not.toMatch(APPROVAL_DIALOG);
    // Only the Gemini API was asked for (no 404s for endpoints the fake lacks), and nothing went to a proxy.
    expect(api.requests.map((r) => `${r.method} ${r.path}`).filter((p) => !/:(streamGenerateContent|generateContent|countTokens)\b/.test(p))).toEqual([]);
    expect(t.trap.attempts).toEqual([]);
  }, 90_000);

  it("its usage, read from its chat file: T-1's tokens are exactly what the API reported for the turns after the grant", async () => {
    const { api, t, pane } = await launch(boardScript());
    const { agent, screen, step } = pane;
    await boardWork(t, pane, 45_000);
    await step(screen.shows(FINAL, 20_000, 'the final answer'));
    const played = api.turns.map((p) => p.conversation.reply!);
    const grant = (await t.event((e) => e.kind === 'grant' && e.agentId === agent.id, 1000, 'the grant')) as Extract<BoardEvent, { kind: 'grant' }>;
    type UsageEvent = Extract<BoardEvent, { kind: 'usage' }>;
    const recorded = async () => (await t.host.board.log()).filter((e): e is UsageEvent => e.kind === 'usage').flatMap((e) => e.turns.map((x) => ({ e, x })));
    // Read within a poll or two of the last turn (UsageWatch.pollMs).
    await step(waitFor(async () => (await recorded()).length >= played.length || undefined, 20_000, 'every response recorded'));
    const all = await recorded();
    const asRecorded = (u: UsageMetadata) => ({ input: u.promptTokenCount - u.cachedContentTokenCount, output: u.candidatesTokenCount, cacheRead: u.cachedContentTokenCount, cacheWrite: 0, reasoning: u.thoughtsTokenCount });
    const key = (x: object) => JSON.stringify(x);
    // Each response once, with exactly its counts.
    expect(all.map((r) => key(r.x.tokens)).sort(), api.summary()).toEqual(played.map((p) => key(asRecorded(p.usage))).sort());
    const sum = (xs: Array<{ input: number; output: number; cacheRead: number }>) => xs.reduce((n, u) => n + u.input + u.output + u.cacheRead, 0);
    const onTask = all.filter((r) => r.e.taskId === 'T-1');
    expect(onTask.length).toBeGreaterThan(0);
    expect(onTask.every((r) => r.e.token === grant.token && r.e.how === 'held')).toBe(true);
    expect(sum(onTask.map((r) => r.x.tokens))).toBe(sum(played.filter((p) => p.at > grant.at).map((p) => asRecorded(p.usage))));
    expect(sum(all.filter((r) => r.e.taskId === null).map((r) => r.x.tokens))).toBe(sum(played.filter((p) => p.at < grant.at).map((p) => asRecorded(p.usage))));
  }, 90_000);

  it('killed and resumed through its profile (--resume <the id it was started with>): the model gets the earlier exchange back', async () => {
    const { api, t, pane: first } = await launch({
      next: (c) => ({ text: c.text.includes(RECALL) ? RECALLED : c.text.includes(REMEMBER) ? NOTED : READY }),
    });
    await first.step(first.screen.shows(READY, 45_000, 'the answer to the first message'));
    await first.step(first.screen.type(REMEMBER, undefined, GEMINI_PASTE_GUARD_MS));
    await first.step(first.screen.shows(NOTED, 20_000, 'the answer to the code word'));
    const argv = await settledArgv(first.agent.pid!);
    const sessionId = argv[argv.indexOf('--session-id') + 1]!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // Gemini saves the chat under its home's tmp/<project>/chats; the profile keeps that home in the
    // agent's folder in the data folder (the harness keeps it under the test's temporary folder).
    await untilSaved(dirname(t.folder), /chats\/[^/]*\.jsonl?$/, NOTED, 10_000);
    await killPane(t, first);
    const before = api.turns.length;

    const resumed = await t.resume(first.agent.id, { diagnose: api.summary });
    expect(resumed.agent).toMatchObject({ id: first.agent.id, name: first.agent.name, status: 'running' });
    const resumedArgv = await settledArgv(resumed.agent.pid!);
    expect(resumedArgv.slice(resumedArgv.indexOf('--resume'), resumedArgv.indexOf('--resume') + 2)).toEqual(['--resume', sessionId]);
    // The profile's first message comes again (the agent's claims ended with its old process): its answer
    // is the resumed session's first exchange.
    await resumed.step(resumed.screen.until(() => api.turns.length > before, 45_000, 'the first request after the resume'));
    const said = api.turns[before]!.conversation.text;
    expect(said, api.summary()).toContain(REMEMBER);
    expect(said).toContain(NOTED);
    await resumed.step(resumed.screen.type(RECALL, undefined, GEMINI_PASTE_GUARD_MS));
    await resumed.step(resumed.screen.shows(RECALLED, 20_000, 'the answer after the resume'));
    expect(t.trap.attempts).toEqual([]);
  }, 120_000);

  it('its state from its own hooks: a shell permission is needs-input within 1 s (source hook, the command named), the answer working, the final answer idle', async () => {
    const api = open(await startFakeGemini(permissionScript));
    const t = open(await openRealCliThread('gemini', { GEMINI_API_KEY: 'forkbench-test-key', GOOGLE_GEMINI_BASE_URL: api.url }));
    seedHome(t.home);
    const states = recordStates(t);
    const pane = await t.launch('gemini', { diagnose: () => `${api.summary()}\nstates:\n${states.summary()}` });
    const { agent, screen, step } = pane;
    const mine = (state: string, source: string, after = 0) => (x: StateSeen) => x.e.agentId === agent.id && x.e.state === state && x.e.source === source && x.e.seq > after;

    // The instructions' turn (sent by --prompt-interactive) ends as every turn does: AfterAgent says idle.
    await step(screen.shows(READY, 45_000, 'the answer to the first message'));
    const ready = await step(states.until(mine('idle', 'hook'), 10_000, 'idle from the AfterAgent hook'));
    await step(screen.type(PERMISSION_ASK, undefined, GEMINI_PASTE_GUARD_MS));
    await step(screen.until(() => SHELL_DIALOG.test(screen.visible()), 30_000, 'the permission dialog'));
    const shownAt = performance.now();
    // Its Notification hook (ToolPermission) fires as the dialog comes up.
    const waiting = await step(states.until(mine('needs-input', 'hook', ready.e.seq), 5_000, 'needs-input from the Notification hook'));
    expect(waiting.at - shownAt).toBeLessThan(1000);
    expect(waiting.e.text).toContain(`touch ${PERMISSION_FILE}`);
    expect(t.host.roster.agents().find((a) => a.id === agent.id)?.state).toMatchObject({ state: 'needs-input', source: 'hook' });
    // No hook failed (a hook Gemini kills or that errs is shown in the pane as "Hook(s) … failed").
    expect(screen.seen()).not.toMatch(/Hook\(s\).*failed/);

    // The person answers "Allow once" (the dialog's first choice).
    t.host.roster.relay.input(agent.id, '\r');
    await step(states.until(mine('working', 'terminal', waiting.e.seq), 10_000, 'working after the answer'));
    await step(screen.shows(PERMISSION_FINAL, 30_000, 'the final answer'));
    await step(states.until(mine('idle', 'hook', waiting.e.seq), 10_000, 'idle from the AfterAgent hook'));
    expect(fs.existsSync(join(t.folder, PERMISSION_FILE))).toBe(true);
    const after = states.all.filter((x) => x.e.agentId === agent.id && x.e.seq > waiting.e.seq).map((x) => `${x.e.state}/${x.e.source}`);
    expect(after.at(-1)).toBe('idle/hook');
    expect(after).not.toContain('needs-input/hook');
    expect(screen.seen()).not.toMatch(/Hook\(s\).*failed/);
    expect(t.trap.attempts).toEqual([]);
  }, 120_000);

  it.skipIf(NO_PROC)(`\`gemini mcp list\` with the pane's environment finds the board server connected${NO_PROC ? ` (skipped: ${NO_PROC})` : ''}`, async () => {
    const { t, pane: { agent, screen, step } } = await launch({ next: () => ({ text: READY }) });
    // The session is up and has answered its first message: the pane's process is gemini, not the fork
    // that started it.
    await step(screen.shows(READY, 45_000, 'the answer to the first message'));

    const pane = environOf(agent.pid!);
    expect(pane.GEMINI_CLI_HOME, 'the profile gives Gemini a home of its own').toBeTruthy();
    // The profile trusts the folder through GEMINI_CLI_TRUST_WORKSPACE (a subcommand takes no --skip-trust),
    // so `mcp list` run with the pane's own environment sees the same trust; an untrusted folder would list
    // the server as "Disabled".
    expect(pane.GEMINI_CLI_TRUST_WORKSPACE, 'the profile trusts the folder').toBe('true');
    const listed = await t.run('gemini', ['mcp', 'list'], { env: pane });
    expect(listed.code, listed.out).toBe(0);
    expect(plain(listed.out)).toMatch(/forkbench: .*forkbench\.cjs mcp .*Connected/);
    expect(t.trap.attempts).toEqual([]);
  }, 90_000);
});
