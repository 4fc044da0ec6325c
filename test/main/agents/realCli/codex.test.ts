/**
 * The real Codex CLI, launched through its real profile in a real pty by a live ThreadHost, talking to a
 * fake OpenAI Responses API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and
 * renew it with the claim's token, run `forkbench board` through Codex's own shell tool, then answer.
 *
 * What this proves about the profile: the board's MCP server starts under the agent's identity and Codex
 * reports it connected, its write tools run without an approval dialog (a waiting dialog would let the
 * lease lapse, and here would keep the renew from ever arriving), and what Codex's shell gets from
 * `forkbench`: in Codex's default workspace-write sandbox the board's socket is refused (EPERM), as the
 * profile's instructions tell the agent; with network access for the sandbox (a person's setting), the
 * command lists the board, so PATH and the identity reach the shell. All of it twice outside Forkbench's
 * sandbox: with the machine's bubblewrap on the panes' PATH, which Codex's sandbox then runs its shell under,
 * and without (its bundled one). And once in Forkbench's sandbox (issue 43), where Codex's own cannot start
 * (it cannot mount a /proc of its own there), so the profile turns it off: its shell then lists the board.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { AGENT_METHODS } from '../../../../src-shared/protocol/agentMethods.js';
import { cliScript } from '../../../../src-main/base/nodeRuntime.js';
import { findOnPath } from '../../../../src-main/base/pathLookup.js';
import { argvOf, settledArgv, ASK, boardWork, closedAfterEach, describeRealCli, killPane, NOTE, openRealCliThread, recordStates, squeeze, untilSaved, type Pane, type RealCliThread, type StateSeen } from '../../../helpers/realCli/harness.js';
import { CODEX_ANNOUNCEMENT, CODEX_API_KEY, codexMcp, seedCodexHome } from '../../../helpers/realCli/codexCli.js';
import { startFakeResponses, type Conversation, type ResponsesUsage, type Turn } from '../../../helpers/realCli/fakeOpenAiResponses.js';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { waitFor } from '../../../helpers/pty.js';

const FINAL = 'T-1 is claimed, noted and renewed; the board was shown.';
const IDENTITY_VARS = ['FORKBENCH_SOCKET', 'FORKBENCH_AGENT_ID', 'FORKBENCH_SECRET', 'FORKBENCH_THREAD_DIR'];

/** The scripted model: each step follows from the function outputs the CLI has sent back so far. */
function boardScript(): { isAgent(c: Conversation): boolean; next(c: Conversation): Turn } {
  return {
    // The agent's conversation carries the board instructions the profile adds as developer instructions.
    isAgent: (c) => c.text.includes('Forkbench') && c.tools.includes('exec_command'),
    next(c) {
      const called = (name: string) => c.calls.find((call) => call.name === name && call.answered);
      if (!c.tools.includes(codexMcp('claim'))) return { text: `No board tools were offered, only: ${c.tools.join(', ')}` };
      const claim = called(codexMcp('claim'));
      if (!claim) return { tool: codexMcp('claim'), input: { taskId: 'T-1' } };
      const token = Number(/"token":\s*(\d+)/.exec(claim.output)?.[1]);
      if (!token) return { text: `The claim failed: ${claim.output}` };
      if (!called(codexMcp('note'))) return { tool: codexMcp('note'), input: { taskId: 'T-1', text: NOTE, token } };
      if (!called(codexMcp('renew'))) return { tool: codexMcp('renew'), input: { taskId: 'T-1', token } };
      if (!called('exec_command')) return { tool: 'exec_command', input: { cmd: 'forkbench board' } };
      return { text: FINAL };
    },
  };
}

const REMEMBER = 'Remember this code word for later: KIWI-7031.';
const NOTED = 'Noted: the code word is safe with me.';
const RECALL = 'Which code word did I give you?';
const RECALLED = 'You gave me the code word from before.';

const PERMISSION_FILE = 'permitted.txt';
const PERMISSION_ASK = 'Create the file permitted.txt with touch.';
const PERMISSION_FINAL = 'permitted.txt is there now.';
/** A turn that needs a person: a command the model asks to run outside the sandbox (Codex's on-request
 *  approvals ask the person for that), then the final answer. */
function permissionScript(): { isAgent(c: Conversation): boolean; next(c: Conversation): Turn } {
  return {
    isAgent: boardScript().isAgent,
    next: (c) =>
      c.calls.find((call) => call.name === 'exec_command' && call.answered)
        ? { text: PERMISSION_FINAL }
        : { tool: 'exec_command', input: { cmd: `touch ${PERMISSION_FILE}`, sandbox_permissions: 'require_escalated', justification: 'Create the file you asked for?' } },
  };
}

/** Text of Codex's approval dialogs: an MCP tool call ("Allow the forkbench MCP server to run tool
 *  "claim"?" with Allow / Allow for this session / Always allow / Cancel), a command, an edit. */
const APPROVAL_DIALOG = /Allow the .{1,80} to run|Allow for this session|Always allow|Would you like to (run|make|apply)|Yes, proceed|don't ask again/i;

/** The `-c key=value` overrides of a command line, in order. */
function configOverrides(argv: string[]): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if ((a === '-c' || a === '--config') && argv[i + 1] !== undefined) out.push('-c', argv[i + 1]!);
  });
  return out;
}


/** The composer's line: `› ` and the text typed so far. */
const composer = (text: string) => new RegExp(`› ${text.slice(0, 40).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`);

/**
 * Waits for the composer, then asks /mcp (each answer is the servers' state at that moment), as a person
 * would, until the board's server shows connected; returns its last status line. Codex does not wait for an
 * MCP server that is not `required` before the first turn (it gives it a short grace), so a task sent while
 * the board's server still starts reaches the model without the board's tools. And a turn sent while it
 * starts left Codex 0.171 without its approval notification (OSC 9), its program status alone said so.
 */
async function boardConnected(pane: Pane): Promise<{ state: string; tools: number }> {
  const { screen: s, step } = pane;
  await step(s.until(() => /Ask Codex to do anything/.test(s.visible()), 20_000, 'the Codex composer'));
  // The board server's status line in every answer so far:
  const statuses = () =>
    s.text().split('\n').flatMap((line) => {
      const m = /^\s*• forkbench: (\S+) \((\d+) tools?\)/.exec(line);
      return m ? [{ state: m[1]!, tools: Number(m[2]) }] : [];
    });
  let status = { state: 'not asked', tools: 0 };
  for (let asked = 0; status.state !== 'connected'; asked++) {
    if (asked === 50) await step(Promise.reject(new Error(`/mcp never showed the board's server connected; last: ${status.state}`)));
    const before = statuses().length;
    await step(s.type('/mcp', composer('/mcp')));
    await step(s.until(() => statuses().length > before, 20_000, 'the answer to /mcp'));
    status = statuses().at(-1)!;
  }
  return status;
}

/** Every warning Codex gathered (its f2 view shows them one at a time, → the next), as the screen showed each. */
async function warnings(t: RealCliThread, pane: Pane): Promise<string> {
  const { agent, screen: s, step } = pane;
  const nth = (i: number) => new RegExp(`Warnings · ${i} of (\\d+)`);
  t.host.roster.relay.input(agent.id, F2);
  await step(s.until(() => nth(1).test(s.visible()), 10_000, "Codex's warnings (f2)"));
  const shown = [s.visible()];
  for (let i = 2; i <= Number(nth(1).exec(shown[0]!)![1]); i++) {
    t.host.roster.relay.input(agent.id, RIGHT);
    await step(s.until(() => nth(i).test(s.visible()), 10_000, `Codex's warning ${i}`));
    shown.push(s.visible());
  }
  return shown.join('\n');
}

/**
 * Codex's Linux sandbox runs its shell through bubblewrap: the system's `bwrap` when one is on PATH (Debian's
 * `bubblewrap`, which Flatpak brings to many desktops), else the one its npm package bundles
 * (codex-resources/bwrap), saying so on screen. Each case as a person's machine has it: with this machine's
 * bwrap on the panes' PATH (when bubblewrap is installed), and with it hidden from them.
 */
const BUNDLED_BWRAP_NOTICE = 'Codex could not find bubblewrap on PATH. Install bubblewrap with your OS package manager.';
/** The keys as xterm sends them. */
const F2 = '\x1bOQ';
const RIGHT = '\x1b[C';
const SYSTEM_BWRAP = findOnPath('bwrap');

const CASES = [
  { bwrap: 'on PATH', contained: false },
  { bwrap: 'hidden', contained: false },
  { bwrap: 'on PATH', contained: true },
] as const;

for (const { bwrap, contained } of CASES) {
  const where = contained ? "in Forkbench's sandbox, its own off" : `its own sandbox, bubblewrap ${bwrap === 'on PATH' ? 'on PATH' : 'not on PATH: its bundled one'}`;
  describeRealCli('codex', `Codex CLI, the real CLI through its profile (${where})`, () => {
    const open = closedAfterEach();
    /** A Thread for Codex: its home (CODEX_HOME, ~/.codex anyway) in the isolated HOME, bwrap as this case has it. */
    const codexThread = () =>
      openRealCliThread('codex', ({ home }) => ({ OPENAI_API_KEY: CODEX_API_KEY, CODEX_HOME: join(home, '.codex') }), { hide: bwrap === 'hidden' ? ['bwrap'] : [], uncontained: contained ? [] : ['codex'] });

    /**
     * Launches Codex through its profile, waits until it reports the board's MCP server connected, asks for
     * the board work, and follows the scripted model on the board until the final answer is on screen.
     */
    async function boardSession(configExtra = '') {
      const api = open(await startFakeResponses(boardScript()));
      // CODEX_HOME set makes `codex mcp list` below read the same home for certain.
      const t = open(await codexThread());
      seedCodexHome(t.env.CODEX_HOME!, fs.realpathSync(t.folder), api.url, configExtra);

      const pane = await t.launch('codex', { answerQueries: true, diagnose: api.summary });
      const { agent, screen: s, step } = pane;

      const status = await boardConnected(pane);

      await step(s.type(ASK, composer(ASK)));
      await boardWork(t, pane);
      await step(s.until(() => /the board was shown\./.test(s.visible()), 20_000, 'the final answer'));
      // Which bubblewrap ran its shell: the bundled one only when none is on PATH, and then Codex says so.
      if (bwrap === 'hidden' && !contained) expect(squeeze(await warnings(t, pane))).toContain(squeeze(BUNDLED_BWRAP_NOTICE));
      else expect(squeeze(await warnings(t, pane))).not.toContain(squeeze(BUNDLED_BWRAP_NOTICE));

      // What the CLI sent back for each call, as the model saw it.
      const last = api.turns.at(-1);
      expect(last?.turn, api.summary()).toEqual({ text: FINAL });
      const conversation = last!.conversation;
      const output = (name: string) => conversation.calls.find((c) => c.name === name)?.output ?? '';
      expect(output(codexMcp('claim'))).toMatch(new RegExp(`"agentId":\\s*"${agent.id}"`));
      for (const tool of ['claim', 'note', 'renew']) expect(output(codexMcp(tool)), tool).not.toMatch(/refused|error/i);
      // No dialog ever stood between the model's calls and the board.
      expect(s.seen()).not.toMatch(APPROVAL_DIALOG);
      expect(t.trap.attempts.filter((a) => !CODEX_ANNOUNCEMENT.test(a))).toEqual([]);
      return { t, agent, conversation, mcpTools: status.tools, shell: output('exec_command'), api };
    }

    it(`claims, notes and renews over MCP with no approval prompt; its ${contained ? "shell, in Forkbench's sandbox, lists the board" : 'sandboxed shell is refused the board'}`, async () => {
      const { t, agent, conversation, mcpTools, shell } = await boardSession();
      // One tool per board method an agent calls (a hook's record of a landed commit is not one).
      expect(mcpTools).toBe(AGENT_METHODS.filter((m) => !m.git).length);
      expect(conversation.text).toContain(`You are agent "${agent.id}"`);
      // `forkbench` is found on PATH (no login shell to reset it) and runs with the agent's identity.
      expect(shell).not.toMatch(/command not found/);
      if (contained) {
        // Codex's sandbox is off (Forkbench's holds its shell), and nothing tells the model otherwise.
        expect(conversation.text).not.toMatch(/shell.{0,40}cannot reach the board/i);
        expect(shell).toMatch(/exited with code 0/);
        expect(shell).toMatch(new RegExp(`T-1\\s+claimed\\s+write hello\\.txt\\s+\\[${agent.id}, token \\d+`));
      } else {
        // The instructions warn that its shell cannot reach the board, and so it is: Codex's workspace-write
        // sandbox refuses it the board's unix socket.
        expect(conversation.text).toMatch(/shell.{0,40}cannot reach the board/i);
        expect(shell).toMatch(/forkbench: cannot reach the board at \S+\.sock: EPERM/);
      }

      // `codex mcp list` in the same home with the profile's own overrides lists the board's server.
      const listed = await t.run('codex', ['mcp', 'list', '--json', ...configOverrides(argvOf(agent.pid!))], { timeoutMs: 20_000 });
      expect(listed.code, listed.stderr).toBe(0);
      const servers = JSON.parse(listed.stdout) as Array<{ name: string; enabled: boolean; transport: { env_vars?: string[] } }>;
      const forkbench = servers.find((server) => server.name === 'forkbench');
      expect(forkbench, listed.stdout).toMatchObject({ enabled: true, transport: { type: 'stdio', command: process.execPath, args: [cliScript(), 'mcp'] } });
      // The identity is forwarded from Codex's environment by name, never written into the config.
      expect(forkbench!.transport.env_vars).toEqual(IDENTITY_VARS);
      expect(listed.stdout).not.toContain(t.host.roster.agent(agent.id)!.secret);
    }, 60_000);

    it("its usage, read from its rollout's token_count events: T-1's tokens are exactly what the API reported for the turns after the grant", async () => {
      const { t, agent, api } = await boardSession();
      const played = api.turns.map((p) => p.conversation.reply!);
      const grant = (await t.event((e) => e.kind === 'grant' && e.agentId === agent.id, 1000, 'the grant')) as Extract<BoardEvent, { kind: 'grant' }>;
      type UsageEvent = Extract<BoardEvent, { kind: 'usage' }>;
      const recorded = async () => (await t.host.board.log()).filter((e): e is UsageEvent => e.kind === 'usage').flatMap((e) => e.turns.map((x) => ({ e, x })));
      // Read within a poll or two of the last turn (UsageWatch.pollMs).
      await waitFor(async () => (await recorded()).length >= played.length || undefined, 20_000, 'every response recorded');
      const all = await recorded();
      const asRecorded = (u: ResponsesUsage) => ({ input: u.input_tokens - u.input_tokens_details.cached_tokens, output: u.output_tokens, cacheRead: u.input_tokens_details.cached_tokens, cacheWrite: 0, reasoning: u.output_tokens_details.reasoning_tokens });
      const key = (x: object) => JSON.stringify(x);
      // Each response once, with exactly its counts.
      expect(all.map((r) => key(r.x.tokens)).sort()).toEqual(played.map((p) => key(asRecorded(p.usage))).sort());
      const sum = (xs: Array<{ input: number; output: number; cacheRead: number }>) => xs.reduce((n, u) => n + u.input + u.output + u.cacheRead, 0);
      const onTask = all.filter((r) => r.e.taskId === 'T-1');
      expect(onTask.every((r) => r.e.token === grant.token && r.e.how === 'held')).toBe(true);
      expect(sum(onTask.map((r) => r.x.tokens))).toBe(sum(played.filter((p) => p.at > grant.at).map((p) => asRecorded(p.usage))));
      expect(sum(all.filter((r) => r.e.taskId === null).map((r) => r.x.tokens))).toBe(sum(played.filter((p) => p.at < grant.at).map((p) => asRecorded(p.usage))));
      expect(onTask.length).toBeGreaterThan(0);
    }, 90_000);

    it('killed and resumed through its profile (`codex resume <its own session id>`): the model gets the earlier exchange back', async () => {
      const script = {
        isAgent: boardScript().isAgent,
        next: (c: Conversation): Turn => ({ text: c.text.includes(RECALL) ? RECALLED : NOTED }),
      };
      const api = open(await startFakeResponses(script));
      const t = open(await codexThread());
      seedCodexHome(t.env.CODEX_HOME!, fs.realpathSync(t.folder), api.url);
      const talk = async (pane: Awaited<ReturnType<typeof t.launch>>, say: string, answer: string) => {
        const { screen: s, step } = pane;
        await step(s.until(() => /Ask Codex to do anything|›/.test(s.visible()), 20_000, 'the Codex composer'));
        await step(s.type(say, composer(say)));
        await step(s.until(() => s.visible().includes(answer), 20_000, `the answer "${answer}"`));
      };

      const first = await t.launch('codex', { answerQueries: true, diagnose: api.summary });
      await talk(first, REMEMBER, NOTED);
      // Codex names the session itself and files it as sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
      const sessions = join(t.env.CODEX_HOME!, 'sessions');
      const file = await untilSaved(sessions, /rollout-.*\.jsonl$/, NOTED, 10_000);
      const sessionId = /([0-9a-f-]{36})\.jsonl$/.exec(file)?.[1];
      expect(sessionId, file).toBeDefined();
      await killPane(t, first);
      const before = api.turns.length;

      const resumed = await t.resume(first.agent.id, { answerQueries: true, diagnose: api.summary });
      expect(resumed.agent).toMatchObject({ id: first.agent.id, name: first.agent.name, status: 'running' });
      const argv = await settledArgv(resumed.agent.pid!);
      expect(argv.slice(argv.indexOf('resume'), argv.indexOf('resume') + 2)).toEqual(['resume', sessionId]);
      await talk(resumed, RECALL, RECALLED);

      const after = api.turns.slice(before);
      expect(after.length, api.summary()).toBeGreaterThan(0);
      const said = after[0]!.conversation.text;
      expect(said).toContain(REMEMBER);
      expect(said).toContain(NOTED);
      expect(said.indexOf(REMEMBER)).toBeLessThan(said.lastIndexOf(RECALL));
      expect(t.trap.attempts.filter((a) => !CODEX_ANNOUNCEMENT.test(a))).toEqual([]);
    }, 90_000);

    // Its dialog asks to run a command outside Codex's own sandbox, which a contained Codex runs without
    // (danger-full-access never asks; 0.171 knows no policy that asks for every command any more).
    it.skipIf(contained)('its state from the terminal (it has no hooks): an approval is needs-input within 1 s of the dialog (program status OSC 7501, the command named by its OSC 9), the answer working, the final answer idle', async () => {
      const api = open(await startFakeResponses(permissionScript()));
      const t = open(await codexThread());
      seedCodexHome(t.env.CODEX_HOME!, fs.realpathSync(t.folder), api.url);
      const states = recordStates(t);
      const pane = await t.launch('codex', { answerQueries: true, diagnose: () => `${api.summary()}\nstates:\n${states.summary()}` });
      const { agent, screen: s, step } = pane;
      const mine = (state: string, source: string, after = 0) => (x: StateSeen) => x.e.agentId === agent.id && x.e.state === state && x.e.source === source && x.e.seq > after;

      await boardConnected(pane);
      await step(s.type(PERMISSION_ASK, composer(PERMISSION_ASK)));
      await step(s.until(() => /Would you like to run the following command\?/.test(s.visible()), 30_000, 'the approval dialog'));
      const shownAt = performance.now();
      // Codex says it is blocked on the person as the request arrives, before it draws the dialog.
      const waiting = await step(states.until(mine('needs-input', 'terminal'), 5_000, 'needs-input from the terminal'));
      expect(waiting.at - shownAt).toBeLessThan(1000);
      expect(waiting.e.text).toBe(`Approval requested: touch ${PERMISSION_FILE}`);
      expect(t.host.roster.agents().find((a) => a.id === agent.id)?.state).toMatchObject({ state: 'needs-input', source: 'terminal' });
      // The path: Codex's program status and its approval notification, both in what the pane printed.
      const printed = t.output(agent.id);
      expect(printed).toContain('\x1b]7501;state=blocked:app=codex:kind=permission');
      expect(printed).toContain(`\x1b]9;Approval requested: touch ${PERMISSION_FILE}\x07`);

      // The person answers Yes (the dialog's first choice).
      t.host.roster.relay.input(agent.id, '\r');
      await step(states.until(mine('working', 'terminal', waiting.e.seq), 10_000, 'working after the answer'));
      await step(s.until(() => s.visible().includes(PERMISSION_FINAL), 20_000, 'the final answer'));
      // The turn's end is its program status "done": nothing else says idle for Codex.
      await step(states.until(mine('idle', 'terminal', waiting.e.seq), 10_000, 'idle after the final answer'));
      // (The pane's output reaches the test's screen after the host's mirror has read it.)
      await step(s.until(() => t.output(agent.id).includes('\x1b]7501;state=done:app=codex'), 5_000, 'the program status "done" in the output'));
      expect(fs.existsSync(join(t.folder, PERMISSION_FILE))).toBe(true);
      const after = states.all.filter((x) => x.e.agentId === agent.id && x.e.seq > waiting.e.seq).map((x) => `${x.e.state}/${x.e.source}`);
      expect(after).toEqual(['working/terminal', 'idle/terminal']);
      expect(t.trap.attempts.filter((a) => !CODEX_ANNOUNCEMENT.test(a))).toEqual([]);
    }, 90_000);

    // A setting of Codex's own sandbox, which a contained Codex runs without.
    it.skipIf(contained)('with network access for its sandbox (a setting of the person), `forkbench board` in its shell lists the board', async () => {
      const { agent, shell } = await boardSession('\n[sandbox_workspace_write]\nnetwork_access = true\n');
      expect(shell).toMatch(/exited with code 0/);
      expect(shell).toMatch(new RegExp(`T-1\\s+claimed\\s+write hello\\.txt\\s+\\[${agent.id}, token \\d+`));
    }, 60_000);
  }, bwrap === 'on PATH' && !SYSTEM_BWRAP ? "bubblewrap is not installed (Debian's `bubblewrap`)" : null);
}

describeRealCli('codex', "Codex CLI's usage across a host restart (issue 47)", () => {
  const open = closedAfterEach();
  const ON_TASK = 'You hold T-1 now: say so.';
  const ON_TASK_SAID = 'Holding T-1.';
  const B_ASK = 'T-1 is yours now: say so.';
  const B_SAID = 'T-1 is mine now.';
  const LAST = 'Anything else on your side?';
  const LAST_SAID = 'Nothing else: T-1 went to another agent.';
  /** Each message typed gets one answer: the answer to the latest of them the conversation holds. */
  const answers: Array<[string, string]> = [
    [REMEMBER, NOTED],
    [ON_TASK, ON_TASK_SAID],
    [RECALL, RECALLED],
    [B_ASK, B_SAID],
    [LAST, LAST_SAID],
  ];

  it("T-1's tokens are exactly what the API reported for the turns under its claims, across a host restart (the panes living on in the pty host) and a reassign after it", async () => {
    const api = open(await startFakeResponses({ isAgent: boardScript().isAgent, next: (c: Conversation): Turn => ({ text: answers.filter(([q]) => c.text.includes(q)).at(-1)?.[1] ?? NOTED }) }));
    const t = open(await openRealCliThread('codex-restart', ({ home }) => ({ OPENAI_API_KEY: CODEX_API_KEY, CODEX_HOME: join(home, '.codex') }), { ptyHost: true }));
    seedCodexHome(t.env.CODEX_HOME!, fs.realpathSync(t.folder), api.url);
    const talk = async (pane: Pane, say: string, answer: string) => {
      const { screen: s, step } = pane;
      await step(s.until(() => /Ask Codex to do anything|›/.test(s.visible()), 20_000, 'the Codex composer'));
      await step(s.type(say, composer(say)));
      await step(s.until(() => s.visible().includes(answer), 20_000, `the answer "${answer}"`));
    };
    let a = await t.launch('codex', { answerQueries: true, diagnose: api.summary });
    let b = await t.launch('codex', { answerQueries: true, diagnose: api.summary });
    const played = () => api.turns.map((p) => p.conversation.reply!);
    // Whose turn it was: A's conversation began with REMEMBER, B's never holds it.
    const playedBy = (agent: 'A' | 'B') => api.turns.filter((p) => p.conversation.text.includes(REMEMBER) === (agent === 'A')).map((p) => p.conversation.reply!);
    type UsageEvent = Extract<BoardEvent, { kind: 'usage' }>;
    const recorded = async () => (await t.host.board.log()).filter((e): e is UsageEvent => e.kind === 'usage').flatMap((e) => e.turns.map((x) => ({ e, x })));
    const allRecorded = (what: string) => waitFor(async () => (await recorded()).length >= played().length || undefined, 20_000, what);

    await talk(a, REMEMBER, NOTED);
    expect((await t.host.board.run((e) => e.claim(a.agent.id, 'T-1'))).ok).toBe(true);
    const grant = (await t.event((e) => e.kind === 'grant' && e.agentId === a.agent.id, 1000, 'the grant to A')) as Extract<BoardEvent, { kind: 'grant' }>;
    await talk(a, ON_TASK, ON_TASK_SAID);
    // What A spent so far is on the board before the host stops, so the restart's re-read finds it all there.
    await a.step(allRecorded('the turns before the restart recorded'));

    await t.restart();
    a = await t.reattach(a, { answerQueries: true, diagnose: api.summary });
    b = await t.reattach(b, { answerQueries: true, diagnose: api.summary });
    expect(t.host.board.state.tasks.get('T-1')?.claim).toMatchObject({ agentId: a.agent.id, token: grant.token });
    await talk(a, RECALL, RECALLED);
    // Recorded before the reassign: the turn is attributed by the time Codex wrote it down, a few ms after the
    // answer shows, and a reassign inside those ms would rightly make it A's own overhead.
    await a.step(allRecorded("A's turn after the restart recorded"));
    expect((await t.host.board.run((e) => e.assign('T-1', b.agent.id))).ok).toBe(true);
    const reassign = (await t.event((e) => e.kind === 'reassign', 1000, 'the reassign')) as Extract<BoardEvent, { kind: 'reassign' }>;
    await talk(b, B_ASK, B_SAID);
    await talk(a, LAST, LAST_SAID);
    // The person's reassign is told in both panes (thread/assignments.ts: A that T-1 was taken, B that it is
    // assigned), and each CLI answers its notice with a turn of its own, whenever the notice is typed: both are
    // waited for, so every turn the counts below speak of was made.
    const answered = (notice: string) => api.turns.some((p) => p.conversation.text.includes(notice) && p.conversation.reply);
    await a.step(waitFor(() => (answered('was taken from you') && answered('You have been assigned T-1')) || undefined, 30_000, 'both panes answered their reassign notice'));
    await a.step(allRecorded('every response recorded'));

    const all = await recorded();
    const asRecorded = (u: ResponsesUsage) => ({ input: u.input_tokens - u.input_tokens_details.cached_tokens, output: u.output_tokens, cacheRead: u.input_tokens_details.cached_tokens, cacheWrite: 0, reasoning: u.output_tokens_details.reasoning_tokens });
    const key = (x: object) => JSON.stringify(x);
    // Each response once (the readers began again at the start of each rollout), with exactly its counts.
    expect(all.map((r) => key(r.x.tokens)).sort()).toEqual(played().map((p) => key(asRecorded(p.usage))).sort());
    const sum = (xs: Array<{ input: number; output: number; cacheRead: number }>) => xs.reduce((n, u) => n + u.input + u.output + u.cacheRead, 0);
    const reported = (turns: ReturnType<typeof played>, from = 0, to = Infinity) => sum(turns.filter((p) => p.at > from && p.at < to).map((p) => asRecorded(p.usage)));
    const counted = (agent: string, taskId: string | null) => sum(all.filter((r) => r.e.agentId === agent && r.e.taskId === taskId).map((r) => r.x.tokens));
    // A: T-1 from its grant to the reassign (a turn before the restart and one after), its own overhead before
    // and after; B: T-1 for every turn it made, all after the reassign (its answer and its notice's).
    expect(counted(a.agent.id, 'T-1')).toBe(reported(playedBy('A'), grant.at, reassign.at));
    expect(played().filter((p) => p.at > grant.at && p.at < reassign.at)).toHaveLength(2);
    expect(playedBy('B').every((p) => p.at > reassign.at)).toBe(true);
    expect(counted(b.agent.id, 'T-1')).toBe(reported(playedBy('B')));
    expect(counted(b.agent.id, 'T-1')).toBeGreaterThan(0);
    expect(counted(a.agent.id, null)).toBe(reported(playedBy('A'), 0, grant.at) + reported(playedBy('A'), reassign.at));
    const cost = t.host.board.state.tasks.get('T-1')?.cost;
    expect(cost && cost.tokens.input + cost.tokens.output + cost.tokens.cacheRead).toBe(reported(playedBy('A'), grant.at, reassign.at) + reported(playedBy('B')));
    expect(t.trap.attempts.filter((x) => !CODEX_ANNOUNCEMENT.test(x))).toEqual([]);
  }, 180_000);
});
