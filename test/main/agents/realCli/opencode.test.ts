/**
 * The real OpenCode CLI (opencode-ai, a native binary) through its real profile, in a real pty, against a live
 * ThreadHost and a scripted model on 127.0.0.1: the agent reaches the board through the forkbench MCP server
 * the profile configures (claim, note, renew) and through the `forkbench` command in its bash tool, and no
 * permission dialog stops it. Nor when the user's own permission rules ask for the board's tools: the
 * profile's config allows them whatever those say, and leaves the user's rule for bash theirs.
 *
 * The model is a provider in the isolated HOME's global config ($XDG_CONFIG_HOME/opencode/opencode.json),
 * standing in for the one a person has set up: an OpenAI-compatible provider (its SDK is bundled in the
 * binary, so nothing is installed at run time) whose baseURL is the fake server.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { type ChatReply, type ChatRequest, type ChatStep, messageText, openAiChat, toolResults } from '../../../helpers/realCli/fakeOpenAiChat.js';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { waitFor } from '../../../helpers/pty.js';
import { settledArgv, ASK, boardWork, closedAfterEach, describeRealCli, environOf, killPane, NO_PROC, NOTE, openRealCliThread, plain, recordStates, ROOT, type RealCliThread, startFakeModelServer, untilSaved } from '../../../helpers/realCli/harness.js';

const MODEL = 'fake-model';
const PROVIDER = 'forkbench-fake';
const FINAL = 'Done: T-1 is claimed, noted and renewed.';

/** No models.dev catalogue, no update check, no share links, no LSP downloads: the proxy trap would only refuse them. */
const OFFLINE_ENV = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
};

/**
 * The global config a person who uses OpenCode with their own OpenAI-compatible endpoint would have, with
 * their own permission rules if they have any.
 */
function writeUserConfig(t: RealCliThread, baseURL: string, permission?: Record<string, string>): void {
  const dir = join(t.home, '.config', 'opencode');
  fs.mkdirSync(dir, { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `${PROVIDER}/${MODEL}`,
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Forkbench fake model',
        options: { baseURL, apiKey: 'fake-key' },
        models: { [MODEL]: { name: 'Fake model', tool_call: true, limit: { context: 200_000, output: 8_192 } } },
      },
    },
    ...(permission ? { permission } : {}),
  };
  fs.writeFileSync(join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  // OpenCode installs its plugin SDK into the config folder on first start (npm, in the background) and
  // skips that once node_modules is there and the lock file lists it: the state after a person's first run.
  const { version } = JSON.parse(fs.readFileSync(join(ROOT, 'node_modules', 'opencode-ai', 'package.json'), 'utf8')) as { version: string };
  const deps = { '@opencode-ai/plugin': version };
  fs.writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ dependencies: deps }, null, 2)}\n`);
  fs.writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ lockfileVersion: 3, requires: true, packages: { '': { dependencies: deps } } }, null, 2)}\n`);
  fs.mkdirSync(join(dir, 'node_modules'), { recursive: true });
}

/** The script: claim T-1, note on it, renew it, run `forkbench board` in bash, then say done. */
function script(body: ChatRequest): ChatStep {
  const names = (body.tools ?? []).map((t) => t.function.name);
  // Side requests (the session title) come without tools.
  if (names.length === 0) return { text: 'Forkbench board check' };
  const tool = (method: string) => {
    const name = names.find((n) => n.toLowerCase().includes('forkbench') && n.endsWith(method));
    if (!name) throw new Error(`no forkbench ${method} tool among: ${names.join(', ')}`);
    return name;
  };
  const results = toolResults(body);
  const token = () => {
    const m = /"token":\s*(\d+)/.exec(messageText(results[0]!));
    if (!m) throw new Error(`no token in the claim's result: ${messageText(results[0]!)}`);
    return Number(m[1]);
  };
  switch (results.length) {
    case 0:
      return { tool: tool('claim'), args: { taskId: 'T-1' } };
    case 1:
      return { tool: tool('note'), args: { taskId: 'T-1', text: NOTE, token: token() } };
    case 2:
      return { tool: tool('renew'), args: { taskId: 'T-1', token: token() } };
    case 3:
      return { tool: 'bash', args: { command: 'forkbench board', description: 'Show the board' } };
    default:
      return { text: FINAL };
  }
}

const REMEMBER = 'Remember this code word for later: KIWI-7031.';
const NOTED = 'Noted: the code word is safe with me.';
const RECALL = 'Which code word did I give you?';
const RECALLED = 'You gave me the code word from before.';

/**
 * OpenCode's permission dialog (1.18: "Permission required" over Allow once / Allow always / Reject), and
 * how it names a call to one of the board's tools ("Call tool forkbench_claim"; a shell command's is
 * "# Shell command" over the command).
 */
const PERMISSION_DIALOG = /Permission required|Allow once|Allow always/;
const BOARD_TOOL_DIALOG = /Call tool forkbench_/;

describeRealCli(
  'opencode',
  'OpenCode (real CLI) on the board',
  () => {
    const open = closedAfterEach();

    it('killed and resumed through its profile (--session <the one session in its own database>): the model gets the earlier exchange back', async () => {
      const api = open(
        await startFakeModelServer(
          openAiChat((body) => {
            // Side requests (the session title) come without tools.
            if ((body.tools ?? []).length === 0) return { text: 'Code word' };
            return { text: JSON.stringify(body.messages).includes(RECALL) ? RECALLED : NOTED };
          }),
        ),
      );
      const t = open(await openRealCliThread('opencode', OFFLINE_ENV));
      writeUserConfig(t, `${api.url}/v1`);
      const agentRequests = () => api.requests.map((r) => r.body as ChatRequest).filter((b) => (b.tools ?? []).length > 0);
      const talk = async (pane: Awaited<ReturnType<typeof t.launch>>, ready: RegExp, say: string, answer: string) => {
        const { screen, step } = pane;
        await step(screen.until(() => ready.test(screen.visible()), 120_000, 'the TUI prompt'));
        await step(screen.type(say));
        await step(screen.until(() => screen.visible().includes(answer), 60_000, `the answer "${answer}"`));
      };

      const first = await t.launch('opencode', { cols: 140 });
      await talk(first, /Ask anything/, REMEMBER, NOTED);
      // The profile gave the agent a session database of its own, in its folder in the data folder.
      expect(environOf(first.agent.pid!).OPENCODE_DB).toMatch(/opencode\.db$/);
      await untilSaved(dirname(t.folder), /opencode\.db(-wal)?$/, NOTED, 10_000);
      await killPane(t, first);
      const before = agentRequests().length;

      const resumed = await t.resume(first.agent.id, { cols: 140 });
      expect(resumed.agent).toMatchObject({ id: first.agent.id, name: first.agent.name, status: 'running' });
      const argv = await settledArgv(resumed.agent.pid!);
      expect(argv[argv.indexOf('--session') + 1]).toMatch(/^ses_/);
      // A resumed session opens on its history (no empty-prompt placeholder): the earlier answer is on screen.
      await talk(resumed, new RegExp(`${NOTED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\s\\S]*ctrl\\+p commands`), RECALL, RECALLED);

      const after = agentRequests().slice(before);
      expect(after.length).toBeGreaterThan(0);
      const said = after[0]!.messages.map(messageText).join('\n');
      expect(said).toContain(REMEMBER);
      expect(said).toContain(NOTED);
      expect(said.indexOf(REMEMBER)).toBeLessThan(said.lastIndexOf(RECALL));
      expect(t.trap.attempts).toEqual([]);
      // OpenCode's start took over a minute on this 2-core machine under the load of four other suites.
    }, 400_000);

    it("its usage, read from its own session storage: T-1's tokens are exactly what the API reported for the turns after the grant", async () => {
      const replies: ChatReply[] = [];
      const api = open(await startFakeModelServer(openAiChat(script, (r) => replies.push(r))));
      const t = open(await openRealCliThread('opencode', OFFLINE_ENV));
      writeUserConfig(t, `${api.url}/v1`);
      const pane = await t.launch('opencode', { cols: 140 });
      const { screen, step } = pane;
      await step(screen.until(() => /Ask anything/.test(screen.visible()), 120_000, 'the TUI prompt'));
      await step(screen.type(ASK));
      // OpenCode's first turn took over a minute on this 2-core machine under the load of other suites.
      const { grant } = await boardWork(t, pane, 120_000);
      await step(screen.until(() => screen.visible().includes(FINAL), 60_000, 'the final answer'));
      // The agent's turns (side requests, the session's title, offer no tools and are no message of it).
      const played = replies.filter((r) => (r.body.tools ?? []).length > 0);
      type UsageEvent = Extract<BoardEvent, { kind: 'usage' }>;
      const recorded = async () => (await t.host.board.log()).filter((e): e is UsageEvent => e.kind === 'usage').flatMap((e) => e.turns.map((x) => ({ e, x })));
      // OpenCode's storage is exported every OpenCodeRead.everyMs.
      await step(waitFor(async () => (await recorded()).length >= played.length || undefined, 60_000, 'every completion recorded'));
      const all = await recorded();
      const key = (x: { input: number; output: number }) => `${x.input}/${x.output}`;
      expect(all.map((r) => key(r.x.tokens)).sort()).toEqual(played.map((p) => key({ input: p.usage.prompt_tokens, output: p.usage.completion_tokens })).sort());
      const sum = (xs: Array<{ input: number; output: number }>) => xs.reduce((n, u) => n + u.input + u.output, 0);
      const onTask = all.filter((r) => r.e.taskId === 'T-1');
      expect(onTask.length).toBeGreaterThan(0);
      expect(onTask.every((r) => r.e.token === grant.token && r.e.how === 'held')).toBe(true);
      expect(sum(onTask.map((r) => r.x.tokens))).toBe(sum(played.filter((p) => p.at > grant.at).map((p) => ({ input: p.usage.prompt_tokens, output: p.usage.completion_tokens }))));
      expect(t.trap.attempts).toEqual([]);
    }, 400_000);

    it.each<[string, Record<string, string> | undefined]>([
      ['a user with no permission rules', undefined],
      // Their own rules ask for the board's renew and for bash: the profile's allow for the board's tools
      // wins over the first; the second stays theirs, so bash asks them.
      ['a user whose own rules ask (bash asks them)', { forkbench_renew: 'ask', bash: 'ask' }],
    ])('for %s: claims, notes and renews over MCP with no dialog, and reads the board with its bash tool', async (_who, permission) => {
      const api = open(await startFakeModelServer(openAiChat(script)));
      const t = open(await openRealCliThread('opencode', OFFLINE_ENV));
      writeUserConfig(t, `${api.url}/v1`, permission);
      const states = recordStates(t);
      const pane = await t.launch('opencode', { cols: 140, diagnose: () => `states:\n${states.summary()}` });
      const { agent, screen, step } = pane;
      const mine = (state: string, source: string, after = 0) => (x: (typeof states.all)[number]) => x.e.agentId === agent.id && x.e.state === state && x.e.source === source && x.e.seq > after;

      // No first-run screens: the prompt comes up with the configured model.
      await step(screen.until(() => /Ask anything/.test(screen.visible()), 25_000, 'the TUI prompt'));
      await step(screen.type(ASK));
      // The board's tools ran with nobody at the keyboard: a dialog before any of them would have held it.
      const { grant } = await boardWork(t, pane);
      const beforeBash = screen.seen();
      const main = () => api.requests.map((r) => r.body as ChatRequest).filter((b) => (b.tools ?? []).length > 0);
      if (permission) {
        // The user's "bash": "ask" is theirs to answer: the dialog comes up for the shell command, while the
        // model's bash call (its fourth, after three results) waits. Allow once, as they would.
        await step(screen.until(() => PERMISSION_DIALOG.test(screen.visible()), 15_000, 'the permission dialog for bash'));
        const shownAt = performance.now();
        expect(screen.visible()).toMatch(/# Shell command[\s┃]*\$ forkbench board/);
        expect(toolResults(main().at(-1)!)).toHaveLength(3);
        // Its state, from its own events: the profile's plugin turns permission.asked into needs-input with
        // the permission's title, within a second of the dialog showing (or before it: the event comes first).
        const waiting = await step(states.until(mine('needs-input', 'hook'), 5_000, 'needs-input from the plugin'));
        expect(waiting.at - shownAt).toBeLessThan(1000);
        expect(waiting.e.text).toContain('forkbench board');
        t.host.roster.relay.input(agent.id, '\r');
        await step(states.until(mine('working', 'terminal', waiting.e.seq), 10_000, 'working after the answer'));
        await step(screen.until(() => screen.visible().includes(FINAL), 15_000, 'the final answer'));
        await step(states.until(mine('idle', 'hook', waiting.e.seq), 10_000, 'idle after the final answer'));
      }
      await step(screen.until(() => screen.visible().includes(FINAL), 15_000, 'the final answer'));
      // The turn's end, from its session.idle event (the plugin's report).
      await step(states.until(mine('idle', 'hook'), 10_000, 'idle after the final answer'));
      expect(beforeBash).not.toMatch(PERMISSION_DIALOG);
      expect(screen.seen()).not.toMatch(permission ? BOARD_TOOL_DIALOG : PERMISSION_DIALOG);
      // The calls were on the screen: what was seen is the session's own.
      expect(screen.seen()).toContain('forkbench_renew');

      // What went back to the model: OpenCode's tools and the board's, the instructions, and each result.
      const first = main()[0]!;
      expect(first.tools!.map((x) => x.function.name)).toEqual(expect.arrayContaining(['bash', 'forkbench_claim', 'forkbench_note', 'forkbench_renew', 'forkbench_board']));
      const system = first.messages.filter((m) => m.role === 'system').map(messageText).join('\n');
      expect(system).toContain(`You are agent "${agent.id}"`);
      const results = toolResults(main().at(-1)!).map(messageText);
      expect(results).toHaveLength(4);
      const token = grant.token;
      expect(JSON.parse(results[0]!)).toMatchObject({ taskId: 'T-1', agentId: agent.id, token });
      expect(JSON.parse(results[1]!)).toMatchObject({ taskId: 'T-1', token });
      expect(JSON.parse(results[2]!)).toMatchObject({ taskId: 'T-1', token });
      expect(results[3]).toContain('T-1');
      expect(results[3]).toContain('write hello.txt');
      expect(results[3]).toContain(agent.id);

      // The profile's environment as the pane got it: `opencode mcp list` there sees the board's server.
      const listed = await t.run('opencode', ['mcp', 'list'], { env: environOf(agent.pid!) });
      expect(listed.code, listed.out).toBe(0);
      expect(plain(listed.out)).toMatch(/✓ forkbench\s+connected/);
      expect(t.trap.attempts).toEqual([]);
    }, 90_000);
  },
  // `opencode mcp list` runs in the pane's own environment, read from /proc.
  NO_PROC,
);
